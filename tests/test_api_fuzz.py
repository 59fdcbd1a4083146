"""Schema-driven fuzzing of the whole REST API with schemathesis: every operation the OpenAPI
schema lists, with generated valid and invalid parameters and bodies, as an operator holding an
API token. Each generated case is sent twice: as generated, and with its path ids pointing at
rows that exist (a fabric with two snapshots and a run), so that the handlers behind the 404s
are fuzzed too. The properties: no response is a 5xx, and every response is one the schema
documents (its status code, content type, headers and body). A hostile tester's 9,021 cases
found no 5xx; this keeps it so.

The examples are fixed (derandomized) so that a run's outcome never depends on luck; the number
per operation is small enough for CI and can be raised with TWIN_FUZZ_EXAMPLES."""
import os

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, given, settings
from rest_framework.authtoken.models import Token
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from twin.accounts.models import Role
from twin.fabrics.services import snapshot_create
from twin.runs.models import RunKind
from twin.runs.services import run_create, run_execute
from twin.simcore.generate import supernode

EXAMPLES_PER_OPERATION = int(os.environ.get("TWIN_FUZZ_EXAMPLES", "25"))
# No 5xx, and every answer as the schema documents it: its status, its content type, its headers, its body.
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_headers_conformance, response_schema_conformance]


@pytest.fixture
def test_database_kept_open():
    """A WSGI handler closes the database connection after each request, which would close the
    test's transaction; Django's own test client disconnects the same signal handler."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def operator_token(make_user) -> str:
    return Token.objects.create(user=make_user(Role.OPERATOR)).key


@pytest.fixture
def stored_ids(db) -> dict[str, dict[str, int]]:
    """Path ids that name stored rows, by the collection the path starts with."""
    spec = supernode(cards=16, switch_radix=8, name="fuzz")
    first, second = (
        snapshot_create(fabric_name="fuzz", spec=spec, source_name=f"v{n}", source_format="generated", checksum=f"{n}" * 64)
        for n in range(2)
    )
    # A finished run, done by the service in this process (no commit here, so nothing is queued).
    run = run_create(kind=RunKind.HOP_STATS, snapshot=second)
    run_execute(run_id=run.pk)
    return {
        "fabrics": {"id": first.fabric_id},
        "snapshots": {"id": first.pk, "other": second.pk},
        "runs": {"id": run.pk},
    }


@pytest.mark.django_db
def test_no_operation_answers_a_server_error(operator_token, stored_ids, test_database_kept_open):
    auth = {"Authorization": f"Token {operator_token}"}
    api_schema = schemathesis.openapi.from_wsgi("/api/schema/", WSGIHandler(), headers=auth)
    operations = [result.ok() for result in api_schema.get_all_operations()]
    failures = {}
    answered_ok = set()
    # Each operation gets its own Hypothesis run, so that every operation is tried and a failure
    # names its operation (schemathesis's pytest plugin does not load under pytest 9).
    for operation in operations:
        existing_ids = stored_ids.get(operation.path.strip("/").split("/")[1], {})

        @given(case=operation.as_strategy())
        @settings(
            max_examples=EXAMPLES_PER_OPERATION, derandomize=True, database=None, deadline=None,
            suppress_health_check=list(HealthCheck),
        )
        def fuzz(case):
            for path_ids in ({}, existing_ids):
                if case.path_parameters:
                    case.path_parameters = {**case.path_parameters, **{k: v for k, v in path_ids.items() if k in case.path_parameters}}
                response = case.call_and_validate(headers=auth, checks=CHECKS)
                if response.status_code < 300:
                    answered_ok.add(operation.label)

        try:
            fuzz()
        except Exception as failure:  # noqa: BLE001 - collected, then reported per operation
            failures[operation.label] = f"{type(failure).__name__}: {failure}"[:3000]
    assert len(operations) >= 21, [operation.label for operation in operations]
    assert not failures, "\n\n".join(f"{label}\n{text}" for label, text in failures.items())
    # The token and the stored rows were used: at least half the operations got past refusal to
    # an answer (the rest need bodies or names that random data rarely hits: uploads, run forms).
    assert len(answered_ok) >= len(operations) // 2, sorted({op.label for op in operations} - answered_ok)
