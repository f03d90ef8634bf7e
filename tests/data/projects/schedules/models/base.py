class Runner:
    def __init__(self, config):
        self.config = config
        self.schedules = []

    def advance_schedules(self):
        for schedule in self.schedules:
            schedule.step()
