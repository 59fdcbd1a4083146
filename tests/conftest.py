"""Shared fixtures. Everything here is real: the configured database (PostgreSQL in CI),
the Redis behind REDIS_URL, a real Celery worker and the real channel layer."""
import os

import pytest
from celery.contrib.testing.worker import start_worker
from hypothesis import settings as hypothesis_settings
from django.test import Client

from tests.stack import scratch_database
from twin import celery_app
from twin.accounts.models import Role
from twin.accounts.services import user_create
from twin.fabrics.services import snapshot_create
from twin.simcore.generate import supernode

PASSWORD = "a-long-test-password-7"

# CI runs the property tests on fixed examples, so that whether a submission lands never depends
# on luck; developers' runs explore new random inputs (failures are kept in .hypothesis/).
hypothesis_settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    hypothesis_settings.load_profile("ci")


@pytest.fixture(autouse=True)
def fresh_channel_layer():
    """Each test gets its own channel layer object. A layer keeps asyncio locks bound to the event
    loop that first used it; the tests run each websocket scenario in a loop of its own (a server
    process has one loop for its life), so a layer shared across tests can outlive its loop."""
    from channels.layers import channel_layers

    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()


@pytest.fixture
def make_user(db):
    def make(role: Role = Role.VIEWER, username: str | None = None):
        return user_create(username=username or f"{role.value}-user", password=PASSWORD, role=role)

    return make


def logged_in_client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def viewer_client(make_user) -> Client:
    return logged_in_client(make_user(Role.VIEWER))


@pytest.fixture
def operator_client(make_user) -> Client:
    return logged_in_client(make_user(Role.OPERATOR))


@pytest.fixture
def admin_client_twin(make_user) -> Client:
    return logged_in_client(make_user(Role.ADMIN))


@pytest.fixture
def small_snapshot(db):
    """A 64-card super-node (radix 16: 8 leaves, 4 spines), stored through the service."""
    spec = supernode(cards=64, switch_radix=16, name="small")
    return snapshot_create(fabric_name="small", spec=spec, source_name="generated", source_format="generated", checksum="0" * 64)


@pytest.fixture
def celery_worker(transactional_db):
    """A real Celery worker consuming from the real Redis broker, in a thread of this process
    (so it sees the test database). Never eager mode."""
    with start_worker(celery_app, pool="solo", perform_ping_check=False, shutdown_timeout=30, loglevel="WARNING") as worker:
        yield worker


@pytest.fixture
def stack_database_url(tmp_path):
    """A database of its own for a whole-product stack in the browser tests (PostgreSQL when
    DATABASE_URL names one, else SQLite), dropped afterwards."""
    with scratch_database(tmp_path, "twin_e2e") as url:
        yield url


@pytest.fixture(scope="module")
def stack_database_url_module(tmp_path_factory):
    """The same, shared by the tests of one module (one stack serving several parametrized cases)."""
    with scratch_database(tmp_path_factory.mktemp("database"), "twin_e2e_module") as url:
        yield url
