"""Every management command of the twin answers --help and does its job once, on a small fabric.
A command added without an invocation here fails test_every_command_is_invoked."""
import re
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command, get_commands

from twin.accounts.models import Role
from twin.fabrics.models import Fabric

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data"
TWIN_COMMANDS = sorted(path.stem for path in ROOT.glob("twin/*/management/commands/*.py") if path.stem != "__init__")

# name -> (arguments, a pattern its output matches); {out} is a scratch directory.
INVOCATIONS = {
    "api_token": (["operator-user"], r"^[0-9a-f]{40}$"),
    "export": (["--fabric", "small", "--format", "ibnetdiscover"], r'^Switch\t16 "S-[0-9a-f]{16}"'),
    "generate-fabric": (["--name", "generated", "--cards", "64", "--radix", "16"], r"generated v1 \(fat-tree\): 64 cards, 12 switches \(8 leaves, 4 spines\); 128 links"),
    "hop_stats": (["--fabric", "small", "--snapshot", "1"], r"card pairs 2,016, mean hops"),
    "ingest": ([str(DATA / "ib" / "ibnetdiscover_2leaf_1spine_8hca.txt"), "--fabric", "lab"], r"lab v1"),
    "journal-import": ([str(DATA / "traces" / "nccl-tests_all_reduce_perf_8gpu_classic.txt"), "--fabric", "small"], r"allreduce"),
    "load_demo": (["--cards", "64", "--name", "demo-small"], r"demo-small"),
    "place": (["--fabric", "small", "--tp", "8", "--dp", "2", "--model-params", "7B"], r"aware"),
    "simulate": (["--fabric", "small", "--bytes", "1MB"], r"busbw"),
    "team": (["add", "red", "operator-user"], r"^red: 1 member\.$"),
    "whatif": (["--fabric", "small", "--stages", "2", "--alternatives", "one-supernode", "--collectives", "allreduce", "--sizes", "1048576", "--out", "{out}"], r"one-supernode\s+2x\s+128 cards[\s\S]*\nknee: (none, scaling holds|At [\d,]+ cards \()"),
}
# Commands whose real invocation another test makes.
INVOKED_ELSEWHERE = {
    "bootstrap": "test_bootstrap_makes_an_admin_and_collects_static_files below (it prints nothing when given the password)",
    "serve": "tests/test_stack_embedded.py starts it for real: Redis, the web server and a worker",
    "web": "tests/test_deployment.py runs it as compose's web containers do: it empties the upload directory, then serves",
}


def test_every_command_is_invoked():
    assert TWIN_COMMANDS and sorted([*INVOCATIONS, *INVOKED_ELSEWHERE]) == TWIN_COMMANDS
    assert all(get_commands().get(name, "").startswith("twin.") for name in TWIN_COMMANDS)


@pytest.mark.parametrize("name", TWIN_COMMANDS)
def test_help(name, capsys):
    with pytest.raises(SystemExit) as exited:
        call_command(name, "--help")
    assert exited.value.code == 0
    assert f" {name} [-h]" in capsys.readouterr().out


@pytest.mark.parametrize("name", sorted(INVOCATIONS))
def test_invocation(name, small_snapshot, make_user, tmp_path, capsys):
    make_user(Role.OPERATOR)
    arguments, expected = INVOCATIONS[name]
    call_command(name, *[argument.format(out=tmp_path / "out") for argument in arguments])
    output = capsys.readouterr().out
    assert re.search(expected, output, re.MULTILINE), output[:2000]


def test_bootstrap_makes_an_admin_and_collects_static_files(small_snapshot, tmp_path, settings, monkeypatch):
    from twin.accounts.models import User

    settings.STATIC_ROOT = tmp_path / "static"
    monkeypatch.setenv("TWIN_ADMIN_PASSWORD", "a-long-admin-password-8")
    call_command("bootstrap", "--no-demo")
    assert User.objects.get(username="admin").check_password("a-long-admin-password-8")
    assert (tmp_path / "static" / "frontend" / "app.js").exists()
    assert list(Fabric.objects.values_list("name", flat=True)) == ["small"]


CHINESE_INVOCATIONS = {  # name -> a pattern its Chinese output matches
    "generate-fabric": r"generated v1（fat-tree）：64 张卡、12 台交换机（8 台叶交换机、4 台脊交换机）；128 条链路",
    "hop_stats": r"卡对 2,016，平均跳数",
    "load_demo": r"已加载 'demo-small' v1：64 张卡、",
    "team": r"^red：1 名成员。$",
    "simulate": r"busbw .* GB/s（受(带宽|时延)限制）",
}


@pytest.mark.parametrize("variables", [{"LANG": "zh_CN.UTF-8"}, {"LANGUAGE": "zh_CN:en", "LANG": "en_US.UTF-8"}], ids=["LANG", "LANGUAGE"])
@pytest.mark.parametrize("name", sorted(CHINESE_INVOCATIONS))
def test_output_is_in_the_shells_language(name, variables, small_snapshot, make_user, tmp_path, capsys, monkeypatch):
    """LANGUAGE, LC_ALL, LC_MESSAGES and LANG choose the language, as gettext reads them; what is
    printed then has no English left but identifiers and units (the walker's rule)."""
    from tests.test_i18n_coverage import english_words

    for variable in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(variable, raising=False)
    for variable, value in variables.items():
        monkeypatch.setenv(variable, value)
    make_user(Role.OPERATOR)
    arguments, _ = INVOCATIONS[name]
    call_command(name, *[argument.format(out=tmp_path / "out") for argument in arguments])
    output = capsys.readouterr().out
    assert re.search(CHINESE_INVOCATIONS[name], output, re.MULTILINE), output[:2000]
    # The test's data names (fabric small, team red...) are no English to translate.
    assert not [line for line in output.splitlines() if english_words(re.sub(r"\b(small|generated|red)\b", "", line))], output[:2000]


def test_output_is_english_without_a_language_or_in_the_c_locale(small_snapshot, capsys, monkeypatch):
    for variable in ("LANGUAGE", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("LC_ALL", "C")
    call_command("load_demo", "--cards", "64", "--name", "demo-small")
    assert "Loaded 'demo-small' v1: 64 cards, " in capsys.readouterr().out


def test_help_is_in_the_shells_language(capsys, monkeypatch):
    for variable in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    with pytest.raises(SystemExit):
        call_command("simulate", "--help")
    shown = capsys.readouterr().out
    assert "在互联网络快照（默认最新的发现快照）的所有卡上仿真一次集合通信。" in shown and "每个 rank 的字节数，例如 342MB、1GiB、4096" in shown


def test_a_placement_the_free_cards_cannot_hold_is_refused_in_the_shells_language(small_snapshot, monkeypatch):
    for variable in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    with pytest.raises(CommandError) as refused:
        call_command("place", "--fabric", "small", "--tp", "8", "--dp", "8", "--busy", "card-0001")
    assert str(refused.value) == "该作业需要 64 张卡（tp 8 x pp 1 x dp 8），但 'small' 的 64 张卡中只有 63 张空闲"
