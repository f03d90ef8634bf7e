import numpy as np
import torch
from sklearn import metrics
from torch.utils.data import DataLoader

from utils import create_variable, make_variables, smiles_letters
from dataPre import ProDataset


def train(trainArgs):
    losses = []
    accs = []
    testResults = {}
    for i in range(trainArgs['epochs']):
        print("Running EPOCH", i + 1)
        total_loss = 0
        n_batches = 0
        correct = 0
        train_loader = trainArgs['train_loader']
        optimizer = trainArgs['optimizer']
        criterion = trainArgs["criterion"]
        attention_model = trainArgs['model']
        for batch_idx, (lines, contactmap, properties) in enumerate(train_loader):
            input, seq_lengths, y = make_variables(lines, properties, smiles_letters)
            attention_model.hidden_state = attention_model.init_hidden()
            contactmap = create_variable(contactmap)
            y_pred, att = attention_model(input, contactmap)
            correct += torch.eq(torch.round(y_pred.type(torch.DoubleTensor).squeeze(1)), y.type(torch.DoubleTensor)).data.sum()
            loss = criterion(y_pred.type(torch.DoubleTensor).squeeze(1), y.type(torch.DoubleTensor))
            total_loss += loss.data
            optimizer.zero_grad()
            loss.backward()
            if trainArgs['clip']:
                torch.nn.utils.clip_grad_norm_(attention_model.parameters(), 0.5)
            optimizer.step()
            n_batches += 1

        avg_loss = total_loss / n_batches
        acc = correct.numpy() / (len(train_loader.dataset))
        losses.append(avg_loss)
        accs.append(acc)
        print("avg_loss is", avg_loss)
        print("train ACC = ", acc)

        if trainArgs['doTest']:
            testArgs = {}
            testArgs['model'] = attention_model
            testArgs['test_proteins'] = trainArgs['test_proteins']
            testArgs['testDataDict'] = trainArgs['testDataDict']
            testArgs['seqContactDict'] = trainArgs['seqContactDict']
            testArgs['criterion'] = trainArgs['criterion']
            testResult = testPerProtein(testArgs)
            testResults[i] = testResult
    return losses, accs, testResults


def testPerProtein(testArgs):
    result = {}
    for x in testArgs['test_proteins']:
        print('\n current test protein:', x.split('_')[0])
        data = testArgs['testDataDict'][x]
        test_dataset = ProDataset(dataSet=data, seqContactDict=testArgs['seqContactDict'])
        test_loader = DataLoader(dataset=test_dataset, batch_size=1, shuffle=True, drop_last=True)
        testArgs['test_loader'] = test_loader
        result[x] = test(testArgs)
    return result


def test(testArgs):
    test_loader = testArgs['test_loader']
    criterion = testArgs["criterion"]
    attention_model = testArgs['model']
    print('test begin ...')
    total_loss = 0
    n_batches = 0
    correct = 0
    all_pred = np.array([])
    all_target = np.array([])
    with torch.no_grad():
        for batch_idx, (lines, contactmap, properties) in enumerate(test_loader):
            input, seq_lengths, y = make_variables(lines, properties, smiles_letters)
            attention_model.hidden_state = attention_model.init_hidden()
            contactmap = contactmap.cuda()
            y_pred, att = attention_model(input, contactmap)
            correct += torch.eq(torch.round(y_pred.type(torch.DoubleTensor).squeeze(1)), y.type(torch.DoubleTensor)).data.sum()
            all_pred = np.concatenate((all_pred, y_pred.data.cpu().squeeze(1).numpy()), axis=0)
            all_target = np.concatenate((all_target, y.data.cpu().numpy()), axis=0)
            loss = criterion(y_pred.type(torch.DoubleTensor).squeeze(1), y.type(torch.DoubleTensor))
            total_loss += loss.data
            n_batches += 1
    testAcc = round(correct.numpy() / (n_batches * test_loader.batch_size), 3)
    testAuc = round(metrics.roc_auc_score(all_target, all_pred), 3)
    testLoss = round(total_loss.item() / n_batches, 5)
    print("test acc =", testAcc, "  test auc =", testAuc, "  test loss = ", testLoss)
    return testAcc, testAuc, testLoss, all_pred, all_target
