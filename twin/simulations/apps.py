from django.apps import AppConfig


class SimulationsConfig(AppConfig):
    name = "twin.simulations"
    label = "simulations"
