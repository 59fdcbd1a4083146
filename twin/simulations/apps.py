from django.apps import AppConfig


class SimulationsConfig(AppConfig):
    name = "twin.simulations"
    label = "simulations"

    def ready(self) -> None:
        from . import fanouts, whatifs  # noqa: F401 - register the fanned-out run kinds
