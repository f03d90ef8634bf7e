class _Settings:
    pass


__S = _Settings()
settings = __S
__S.EPOCHS = 30
__S.DECAY_FROM = -1
__S.WARM_EPOCHS = 3
