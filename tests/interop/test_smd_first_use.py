"""What a new user meets first with the smd command: help, usage errors, a file given for a
folder, a damaged trial under `smd rules`. Each test pins a message or an exit status that a user
(or a script) reads."""
import json
import re
import shutil

from conftest import REPO, run_smd

FIXTURES = REPO / "tests" / "data" / "trials"
COMMANDS = ["dump", "ls", "cat", "rules", "export-tensorboard", "uploads"]


def exit_codes_of_the_tool():
    """{value: name} of tools/smd/commands.h's ExitCode enum."""
    text = (REPO / "tools" / "smd" / "commands.h").read_text()
    return {int(v): n for n, v in re.findall(r"^\s*(kExit\w+)\s*=\s*(\d+),", text, re.M)}


# ---- smd --help, smd --version, smd with nothing ------------------------------------------------

def test_help_aligns_every_command_and_lists_every_exit_status(smd_bin):
    rc, out, err = run_smd(smd_bin, "--help")
    assert rc == 0, err
    lines = out.split("commands:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert [line.split()[0] for line in lines] == COMMANDS
    # every summary starts in one column, at least two spaces after the longest name
    columns = {re.match(r"  (\S+)( +)", line).end() for line in lines}
    assert len(columns) == 1, out
    assert columns.pop() >= 2 + len("export-tensorboard") + 2
    status = " ".join(out.split("exit status:", 1)[1].split())
    codes = exit_codes_of_the_tool()
    assert 6 in codes and 130 in codes
    for value in codes:
        assert re.search(rf"(^|; ){value} ", status), f"exit status {value} ({codes[value]}) missing: {status}"


def test_version_takes_no_argument(smd_bin):
    rc, out, err = run_smd(smd_bin, "--version")
    assert rc == 0 and re.fullmatch(r"smd \d+\.\d+\.\d+\n", out), (out, err)
    rc, out, err = run_smd(smd_bin, "--version", "extra")
    assert rc == 2 and out == ""
    assert "--version takes no arguments" in err and "'extra'" in err


def test_no_command_and_help_of_an_unknown_command(smd_bin):
    rc, out, err = run_smd(smd_bin)
    assert rc == 2 and err.startswith("smd: no command given\n") and "usage: smd" in err
    rc, out, err = run_smd(smd_bin, "help", "lss")
    assert rc == 2 and "no help for 'lss': not a command" in err
    rc, out, err = run_smd(smd_bin, "help", "ls")
    assert rc == 0 and out.startswith("usage: smd ls")


# ---- usage errors say what is missing ------------------------------------------------------------

def test_export_tensorboard_says_which_argument_is_missing(smd_bin, tmp_path):
    trial = FIXTURES / "modes_reentry"
    rc, out, err = run_smd(smd_bin, "export-tensorboard", trial)
    assert rc == 2
    assert err.splitlines()[0] == "smd export-tensorboard: needs the output folder OUT after the trial folder PATH"
    assert "usage: smd export-tensorboard" in err
    rc, out, err = run_smd(smd_bin, "export-tensorboard")
    assert rc == 2 and "needs the trial folder PATH and the output folder OUT" in err
    rc, out, err = run_smd(smd_bin, "export-tensorboard", trial, tmp_path / "a", tmp_path / "b")
    assert rc == 2 and "takes two arguments, PATH and OUT, and nothing else" in err
    assert not (tmp_path / "a").exists()


def test_a_file_is_not_a_trial_folder(smd_bin, tmp_path):
    event_file = sorted((FIXTURES / "modes_reentry" / "events").rglob("*.tfevents"))[0]
    for args in (["ls", event_file], ["dump", event_file], ["cat", event_file, "loss"],
                 ["rules", event_file, "--rule", "ExplodingTensor"],
                 ["export-tensorboard", event_file, tmp_path / "tb"]):
        rc, out, err = run_smd(smd_bin, *args)
        assert rc == 1, (args, err)
        assert f"smd {args[0]}: '{event_file}' is not a trial folder: it is a file" in err, err
        assert "Not a directory" not in err and out == ""
    # a folder that does not exist keeps its own message
    rc, out, err = run_smd(smd_bin, "ls", tmp_path / "nothing")
    assert rc == 1 and "does not exist" in err


# ---- smd cat -------------------------------------------------------------------------------------

def test_cat_message_for_a_value_not_saved_has_separate_sentences(smd_bin):
    # reductions_float: r_vec32 has only reductions saved (smdebug's own fixture trial)
    rc, out, err = run_smd(smd_bin, "cat", FIXTURES / "reductions_float", "r_vec32", "--step", "1")
    assert rc == 7, err
    assert "as it was not saved. This tensor has reductions saved for this step." in err
    assert not re.search(r"[a-z]\.[A-Z]", err), err  # no sentence glued to the next


def reductions_in_help(smd_bin):
    rc, out, err = run_smd(smd_bin, "cat", "--help")
    assert rc == 0, err
    block = out.split("\n  --reduction R ", 1)[1].split("\n  --npy", 1)[0]
    listed = " ".join(block.split()).split("value: ", 1)[1].split(", or abs_<one of them>", 1)[0]
    return [n.strip() for n in listed.split(",")]


def test_cat_help_lists_every_reduction_it_accepts(smd_bin):
    names = reductions_in_help(smd_bin)
    assert {"min", "max", "mean", "std", "variance", "sum", "prod", "median", "l1", "l2",
            "l1_norm", "l2_norm"} <= set(names), names
    # each listed name, with and without abs_, is accepted (rr_vec32 has its raw value saved)
    trial = FIXTURES / "reductions_float"
    for name in names:
        for spelled in (name, "abs_" + name):
            rc, out, err = run_smd(smd_bin, "cat", trial, "rr_vec32", "--step", "1", "--reduction", spelled)
            assert rc == 0, (spelled, err)
            assert out.startswith(f"rr_vec32 {spelled}  step 1"), out
    # and what is refused is refused with the same list
    rc, out, err = run_smd(smd_bin, "cat", trial, "rr_vec32", "--step", "1", "--reduction", "l3")
    assert rc == 2
    assert "expected one of " + ", ".join(names) + ", each optionally prefixed with abs_" in err, err


# ---- smd rules on a damaged trial -----------------------------------------------------------------

def truncated_trial(tmp_path):
    """modes_reentry (written by the real smdebug) with the event file of global step 2 cut short."""
    trial = tmp_path / "trial"
    shutil.copytree(FIXTURES / "modes_reentry", trial)
    event_file = trial / "events" / "000000000002" / "000000000002_worker_0.tfevents"
    size = event_file.stat().st_size
    with open(event_file, "r+b") as f:
        f.truncate(size // 2)
    return trial, event_file


def test_rules_report_a_rule_that_failed_as_error(smd_bin, tmp_path):
    trial, event_file = truncated_trial(tmp_path)
    rules = ["--rule", "ExplodingTensor", "--rule", "LossNotDecreasing", "--no-progress"]

    rc, out, err = run_smd(smd_bin, "rules", trial, *rules)
    assert rc == 1, (out, err)
    assert "NoIssuesFound" not in out, out
    lines = out.splitlines()
    assert lines[0].startswith("ExplodingTensor: Error at step 2 (2 step(s) evaluated, 0 skipped, "
                               "0 issue(s) found before): SMD_E_CORRUPT: rule ExplodingTensor at step 2: ")
    assert str(event_file) in lines[0]
    assert lines[1] == ("LossNotDecreasing: Stopped (2 step(s) evaluated, 0 skipped, last step 1; "
                        "not finished: another rule failed)")

    rc, out, err = run_smd(smd_bin, "rules", trial, *rules, "--json")
    assert rc == 1, (out, err)
    summary = {d["rule"]: d for d in map(json.loads, out.splitlines())}
    failed = summary["ExplodingTensor"]
    assert failed["status"] == "Error"
    assert failed["error"]["code"] == "SMD_E_CORRUPT" and failed["error"]["step"] == 2
    assert str(event_file) in failed["error"]["message"]
    assert failed["steps_evaluated"] == 2 and failed["conditions_met"] == 0
    stopped = summary["LossNotDecreasing"]
    assert stopped["status"] == "Stopped" and "error" not in stopped

    # alone, the failing rule is still Error (and the step's error is reported on stderr too)
    rc, out, err = run_smd(smd_bin, "rules", trial, "--rule", "ExplodingTensor", "--json")
    assert rc == 1 and "SMD_E_CORRUPT" in err
    (only,) = map(json.loads, out.splitlines())
    assert only["status"] == "Error" and only["error"]["step"] == 2, only


def test_rules_on_the_intact_trial_still_finish(smd_bin):
    rc, out, err = run_smd(smd_bin, "rules", FIXTURES / "modes_reentry", "--rule", "ExplodingTensor",
                           "--rule", "LossNotDecreasing", "--json")
    assert rc == 0, err
    statuses = [json.loads(line)["status"] for line in out.splitlines()]
    assert statuses == ["NoIssuesFound", "NoIssuesFound"]


def test_rules_help_names_every_status(smd_bin):
    rc, out, err = run_smd(smd_bin, "rules", "--help")
    assert rc == 0
    for status in ("IssuesFound", "NoIssuesFound", "Error", "Stopped"):
        assert status in out


# ---- the README ------------------------------------------------------------------------------------

def test_readme_says_what_quick_mode_skips():
    script = (REPO / "scripts" / "test.sh").read_text()
    skipped = script.split('if [ "${SMD_TEST_QUICK:-0}" != "1" ]; then', 1)[1].split("\nfi\n", 1)[0]
    assert "Sanitizer" in skipped and "fuzz" in skipped  # what the quick mode leaves out
    readme = " ".join((REPO / "README.md").read_text().split())
    sentence = readme.split("`SMD_TEST_QUICK=1 ./scripts/test.sh`", 1)[1].split(".", 1)[0]
    assert "sanitizer" in sentence and "fuzzing" in sentence, sentence
