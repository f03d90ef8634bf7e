from models import build_model


def run(config, batches):
    runner = build_model(config)
    for features, labels in batches:
        runner.advance_schedules()
        runner.learn(features, labels)
