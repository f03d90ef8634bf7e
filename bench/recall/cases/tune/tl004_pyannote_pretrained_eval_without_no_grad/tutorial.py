from pyannote.audio.features import Pretrained
from pyannote.database import get_protocol

protocol = get_protocol('AMI.SpeakerDiarization.MixHeadset')
sad = Pretrained(validate_dir='models/sad_ami/train/AMI.SpeakerDiarization.MixHeadset.train/validate/AMI.SpeakerDiarization.MixHeadset.development',
                 step=0.25, batch_size=32, device='cuda')

for file in protocol.test():
    scores = sad(file)
    print(file['uri'], scores.data.shape)
