from django.apps import AppConfig


class SimulationsConfig(AppConfig):
    name = "twin.simulations"
    label = "simulations"

    def ready(self) -> None:
        from . import fanouts  # noqa: F401 - registers the fanned-out run kinds
