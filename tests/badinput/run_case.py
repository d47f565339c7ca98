#!/usr/bin/python3
"""Runs one case of tests/badinput/cases.json: a hostile input handed to a Tessel program.

    run_case.py --case NAME --build-dir BUILD --source-dir SRC

A case is a command (an argument vector: no shell ever sees it), the fixtures it needs, the exit
status it must end with, words its message must contain, and what it may create. Around the
command this checks what every case shares:

    fixtures ──► snapshot of {work} ──► command (timeout) ──► exit status, words,
                                                              {work} compared with the snapshot

  - it ends within its time limit (a hang fails the case, it is not waited out);
  - it is not killed by a signal (a crash fails even where a non-zero status is expected);
  - no file in {work} (the user's models, inputs, earlier outputs, recovery files) changed or
    vanished, and nothing was created there but what the case's "creates" patterns allow;
  - HOME and the XDG folders point into a scratch folder, so the studio's settings and autosave
    never touch the real ones.

Case fields (cases.json):
  name, class       the case and the defect class of issue 12 it keeps fixed
  fixtures          names from fixtures.py, built into {work} before the command runs
  command           argv; {tessel} {studio} {measure} {work} {source} {build} are replaced
  stdin             a file (placeholders allowed) fed to the command, else nothing
  env               variables to set; null unsets one
  exit              the exit status, or "nonzero"
  words             strings that must all appear in stdout + stderr
  absent_words      strings that must not appear there
  creates           glob patterns (relative to {work}) of files the command may create
  may_change        paths (relative to {work}) the command may rewrite
  moved             {path: pattern}: the file may move to a new name matching the pattern, content
                    unchanged (a damaged file set aside, never deleted); the path may then be
                    written anew
  check             a function of fixtures.CHECKS run on {work} afterwards
  needs             "studio" when the case runs the studio (skipped from the list otherwise)
  timeout           seconds (default 60)
"""
import argparse
import fnmatch
import hashlib
import json
import os
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixtures  # noqa: E402


def snapshot(root):
    """Every entry under root: its kind and content hash (files), target (links); never opens a FIFO."""
    entries = {}
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in dirs + files:
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, root)
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                entries[rel] = ("link", os.readlink(path))
            elif stat.S_ISREG(st.st_mode):
                with open(path, "rb") as f:
                    entries[rel] = ("file", hashlib.sha256(f.read()).hexdigest())
            else:
                entries[rel] = ("dir" if stat.S_ISDIR(st.st_mode) else "special", "")
    return entries


def substitute(text, places):
    for key, value in places.items():
        text = text.replace("{" + key + "}", value)
    return text


def run(case, build_dir, source_dir):
    problems = []
    with tempfile.TemporaryDirectory(prefix="tessel-badinput-") as scratch:
        work = os.path.join(scratch, "work")
        home = os.path.join(scratch, "home")
        os.mkdir(work)
        os.mkdir(home)
        for name in case.get("fixtures", []):
            fixtures.FIXTURES[name](work, source_dir)
        places = {
            "tessel": os.path.join(build_dir, "app", "cli", "tessel"),
            "studio": os.path.join(build_dir, "app", "studio", "tessel-studio"),
            "measure": os.path.join(build_dir, "app", "measure", "tessel-measure"),
            "work": work, "source": source_dir, "build": build_dir,
        }
        argv = [substitute(a, places) for a in case["command"]]
        env = dict(os.environ)
        env.update({"HOME": home, "XDG_CONFIG_HOME": os.path.join(home, ".config"),
                    "XDG_DATA_HOME": os.path.join(home, ".local", "share"),
                    "XDG_CACHE_HOME": os.path.join(home, ".cache"), "QT_QPA_PLATFORM": "offscreen"})
        for key, value in case.get("env", {}).items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = substitute(value, places)
        before = snapshot(work)
        stdin = open(substitute(case["stdin"], places), "rb") if "stdin" in case else subprocess.DEVNULL
        timeout = case.get("timeout", 60)
        print("$ " + " ".join(argv))
        try:
            done = subprocess.run(argv, stdin=stdin, capture_output=True, env=env, cwd=work, timeout=timeout)
        except subprocess.TimeoutExpired:
            return ["did not finish within %d s (a hang)" % timeout]
        finally:
            if stdin is not subprocess.DEVNULL:
                stdin.close()
        out = done.stdout.decode("utf-8", "replace") + done.stderr.decode("utf-8", "replace")
        print(out.rstrip())
        print("exit status %d" % done.returncode)

        if done.returncode < 0:
            problems.append("killed by signal %d (a crash)" % -done.returncode)
        elif case["exit"] == "nonzero":
            if done.returncode == 0:
                problems.append("exit status 0, expected a failure")
        elif done.returncode != case["exit"]:
            problems.append("exit status %d, expected %d" % (done.returncode, case["exit"]))
        for word in case.get("words", []):
            if substitute(word, places) not in out:
                problems.append("the message lacks %r" % word)
        for word in case.get("absent_words", []):
            if substitute(word, places) in out:
                problems.append("the message contains %r" % word)

        after = snapshot(work)
        may_change = set(case.get("may_change", []))
        moved = case.get("moved", {})
        for rel, entry in before.items():
            pattern = moved.get(rel)
            set_aside = pattern and any(fnmatch.fnmatch(new, pattern) and after[new] == entry
                                        for new in after if new not in before)
            if rel not in after:
                if not set_aside:
                    problems.append("%s was removed" % rel)
            elif after[rel] != entry and rel not in may_change and not set_aside:
                problems.append("%s was changed" % rel)
        for rel in after:
            if rel not in before and not any(fnmatch.fnmatch(rel, p) for p in case.get("creates", [])):
                problems.append("%s was created" % rel)
        if "check" in case and not problems:
            problems += fixtures.CHECKS[case["check"]](work)
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    parser.add_argument("--case", required=True)
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--cases", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases.json"))
    args = parser.parse_args()
    with open(args.cases) as f:
        cases = {c["name"]: c for c in json.load(f)["cases"]}
    case = cases[args.case]
    print("case %s (%s)" % (case["name"], case["class"]))
    problems = run(case, os.path.abspath(args.build_dir), os.path.abspath(args.source_dir))
    for p in problems:
        print("FAIL: " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
