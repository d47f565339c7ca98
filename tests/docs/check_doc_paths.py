#!/usr/bin/env python3
"""Every file or folder of the repository that a document or a source comment cites must exist.

    python3 tests/docs/check_doc_paths.py REPO_ROOT

Docs and comments send readers to files ("the rule is written in plugins/c_source/compiler_options.h").
When a file is renamed or split, the code still compiles but those pointers go stale, and nothing
else notices. This script finds them.

What is read:
  - every *.md file in the repository, whole (prose, tables and code blocks alike);
  - the comments of source files under core/ app/ views/ plugins/ tests/ scripts/ .ci/:
      C and C++ (.h .cpp .c .cc .def): text in // and /* */ comments. String and character
        literals, raw strings included, are skipped, so a "http://..." in code is not a comment;
      Python (.py, or a python shebang): # comments and docstrings (statement-level strings),
        found with the tokenize module;
      shell (.sh, or an sh/bash shebang): # that starts a word outside quotes;
      CMake (CMakeLists.txt, .cmake): # outside a quoted argument;
      other .txt files and .supp files: lines whose first character is #.
    Code itself is not read: an #include or a string naming a file is the compiler's business.
  Top-level folders whose name starts with "build" (build trees) and .git are never walked.

What counts as a reference:
  - a token that starts with one of the top-level folders core/ app/ views/ plugins/ tests/
    scripts/ docs/ resources/ .ci/, not preceded by another path character (so a path in a build
    tree, build/app/cli/tessel, is not read, nor is /usr/share/...);
  - README.md or CMakeLists.txt standing alone: the top-level file;
  - the target of a markdown link [text](target), relative to the .md file (web links and
    #anchors alone are left out);
  - a bare source file name with no folder, ending .h .cpp .def .py .sh .cmake or .sched
    (fuse_ops.h, default_schedule.cpp): some file of the repository must have that name, since a
    reader finds it by name. Names of files that live outside the tree are listed, each with its
    reason, in EXTERNAL_NAMES.
  Trailing punctuation (. , : ; ) ' " ! ? and backticks) is dropped, and so is anything after a
  ':' (path:line) or, in a link, a '#' (an anchor). A path without an extension may name a folder,
  or a C++ or Python module by its stem: core/tune/records stands for core/tune/records.{h,cpp},
  tests/bench/bench_accel for the source of the program of that name.

Paths cited on purpose that exist only elsewhere are listed, each with its reason, in
ALLOWED_MISSING.

Skipped, because they are patterns rather than paths: tokens holding < > * $ ... or the ellipsis
character, or the word NAME. A single brace group such as core/support/tensor.{h,cpp} is expanded
and each alternative checked; a token with any other brace is skipped.

Output: one line per missing reference, "FILE:LINE: cites PATH, which does not exist", and exit
status 1; or "N references checked, all exist" and exit status 0.
"""
import io
import os
import re
import sys
import tokenize

SCANNED_CODE_FOLDERS = ("core", "app", "views", "plugins", "tests", "scripts", ".ci")
PATH_FOLDERS = ("core", "app", "views", "plugins", "tests", "scripts", "docs", "resources", r"\.ci")

# Paths that are cited on purpose but live only somewhere else: a prefix, and why it may be missing.
ALLOWED_MISSING = {
    "plugins/myacc/": "the example plugin that docs/adding-a-backend.md has the reader create",
}

# Bare file names that are cited on purpose but are not in the tree.
EXTERNAL_NAMES = {
    "cuda.h": "the CUDA driver API header, from the CUDA toolkit",
    "cuda_fp16.h": "the CUDA toolkit's half-precision header",
    "nvrtc.h": "NVRTC's header, from the CUDA toolkit",
    "mpi.h": "OpenMPI's header (libopenmpi-dev)",
    "model.h": "the C header `tessel build` writes for a model named model",
}

# A path token: a top-level folder, then every character up to whitespace or a delimiter that
# never occurs in this tree's file names. The lookbehind keeps build/app/... and ${X}/plugins out.
PATH_TOKEN = re.compile(r"(?<![\w./\-$}{])(?:%s)/[^\s`'\"()\[\]|]*" % "|".join(PATH_FOLDERS))
TOP_FILE_TOKEN = re.compile(r"(?<![\w./\-])(?:README\.md|CMakeLists\.txt)(?![\w.\-/])")
BARE_NAME_TOKEN = re.compile(r"(?<![\w/.<\-])[\w\-]+\.(?:h|cpp|def|py|sh|cmake|sched)(?![\w/])")
MARKDOWN_LINK = re.compile(r"\[[^\]]*\]\(<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\)")
MODULE_EXTENSIONS = (".h", ".cpp", ".py")
PLACEHOLDER_MARKS = ("<", ">", "*", "$", "...", "\u2026", "NAME")
TRAILING = ".,:;)'\"`!?"


def mask(text, keep):
    """text with every character outside the kept (start, end) spans turned into a space, newlines
    kept: comment text stays on its own line and column, and code cannot run into a token."""
    out = [c if c == "\n" else " " for c in text]
    for start, end in keep:
        out[start:end] = text[start:end]
    return "".join(out)


def raw_string_prefix(text, i):
    """Whether the R at i starts a raw string literal (R"x(...)x", also u8R, LR, uR, UR) rather
    than ending an identifier such as FOOR."""
    before = text[max(0, i - 2):i]
    if before.endswith(("L", "u", "U")) or before == "u8":
        before = text[max(0, i - 3):i - (2 if before == "u8" else 1)]
    return not before or not (before[-1].isalnum() or before[-1] == "_")


def c_comment_spans(text):
    """(start, end) of the body of every // and /* */ comment of C or C++ source."""
    spans, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            spans.append((i + 2, end))
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end
            spans.append((i + 2, end))
            i = end + 2
        elif text.startswith('R"', i) and raw_string_prefix(text, i) and text.find("(", i + 2) > 0:
            open_paren = text.find("(", i + 2)
            delimiter = text[i + 2:open_paren]
            end = text.find(")" + delimiter + '"', open_paren)
            i = n if end < 0 else end + len(delimiter) + 2
        elif c == '"' or (c == "'" and (i == 0 or not text[i - 1].isalnum())):
            # A quote after a letter or digit is a digit separator (1'000) or a prefixed character
            # literal (L'x'); stepping over the latter as code is harmless.
            i += 1
            while i < n and text[i] != c and text[i] != "\n":
                i += 2 if text[i] == "\\" else 1
            i += 1
        else:
            i += 1
    return spans


def python_comment_spans(text):
    """(start, end) of every # comment and docstring of Python source, from the tokenizer."""
    line_starts = [0]
    for line in text.splitlines(keepends=True):
        line_starts.append(line_starts[-1] + len(line))

    def offset(row_col):
        return line_starts[row_col[0] - 1] + row_col[1]

    spans, statement_start = [], True
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                spans.append((offset(tok.start) + 1, offset(tok.end)))
            elif tok.type == tokenize.STRING and statement_start:
                spans.append((offset(tok.start), offset(tok.end)))
            if tok.type not in (tokenize.COMMENT, tokenize.NL):
                statement_start = tok.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)
    except (tokenize.TokenError, SyntaxError):
        pass  # a file Python cannot tokenize keeps the spans found so far
    return spans


def hash_comment_spans(text, shell):
    """(start, end) of every # comment of shell (shell=True: # must start a word) or CMake
    source; quotes are followed across lines, as both languages allow."""
    spans, i, n, quote = [], 0, len(text), None
    while i < n:
        c = text[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 1
            elif c == quote:
                quote = None
        elif c == "\\":
            i += 1
        elif c in "'\"" and (shell or c == '"'):
            quote = c
        elif c == "#" and (not shell or i == 0 or text[i - 1] in " \t\n;&|("):
            end = text.find("\n", i)
            end = n if end < 0 else end
            spans.append((i + 1, end))
            i = end
            continue
        i += 1
    return spans


def line_comment_spans(text):
    """(start, end) of every line whose first non-blank character is #."""
    spans, start = [], 0
    for line in text.splitlines(keepends=True):
        if line.lstrip().startswith("#"):
            spans.append((start, start + len(line.rstrip("\n"))))
        start += len(line)
    return spans


def language_of(rel_path, text):
    name = os.path.basename(rel_path)
    ext = os.path.splitext(name)[1]
    first = text.split("\n", 1)[0] if text.startswith("#!") else ""
    if ext in (".h", ".hpp", ".c", ".cc", ".cpp", ".def"):
        return "c"
    if ext == ".py" or "python" in first:
        return "python"
    if name == "CMakeLists.txt" or ext == ".cmake":
        return "cmake"
    if ext == ".sh" or re.search(r"\b(ba)?sh\b", first):
        return "shell"
    if ext in (".txt", ".supp"):
        return "lines"
    return None


def readable_text(rel_path, text):
    """The text of the file that is documentation, other characters blanked; None: not read."""
    if rel_path.endswith(".md"):
        return text
    top = rel_path.split("/", 1)[0]
    if top not in SCANNED_CODE_FOLDERS:
        return None
    language = language_of(rel_path, text)
    if language == "c":
        return mask(text, c_comment_spans(text))
    if language == "python":
        return mask(text, python_comment_spans(text))
    if language in ("shell", "cmake"):
        return mask(text, hash_comment_spans(text, shell=language == "shell"))
    if language == "lines":
        return mask(text, line_comment_spans(text))
    return None


def expand(path):
    """The paths a token stands for: itself, a single {a,b} group expanded, or none (a pattern)."""
    if any(mark in path for mark in PLACEHOLDER_MARKS):
        return []
    group = re.fullmatch(r"([^{}]*)\{([^{}]*,[^{}]*)\}([^{}]*)", path)
    if group:
        return [group.group(1) + alt + group.group(3) for alt in group.group(2).split(",")]
    return [] if "{" in path or "}" in path else [path]


def clean(token):
    token = token.split(":", 1)[0]
    return token.rstrip(TRAILING)


def references(rel_path, readable):
    """(line, path, bare) for every file the readable text cites: path is relative to the root,
    or with bare=True a file name without a folder."""
    md_dir = os.path.dirname(rel_path)
    for number, line in enumerate(readable.split("\n"), 1):
        for match in PATH_TOKEN.finditer(line):
            for path in expand(clean(match.group(0))):
                yield number, path, False
        for match in TOP_FILE_TOKEN.finditer(line):
            yield number, match.group(0), False
        for match in BARE_NAME_TOKEN.finditer(line):
            yield number, match.group(0), True
        if rel_path.endswith(".md"):
            for match in MARKDOWN_LINK.finditer(line):
                target = match.group(1).split("#", 1)[0]
                if not target or re.match(r"[a-zA-Z][\w+.-]*:", target):
                    continue  # an anchor in this page, or a web or mail link
                joined = target.lstrip("/") if target.startswith("/") else os.path.join(md_dir, target)
                for path in expand(os.path.normpath(joined)):
                    yield number, path, False


def exists(root, path):
    """Whether path names a file or folder, or (without an extension) a module's source files."""
    full = os.path.join(root, path)
    if os.path.exists(full):
        return True
    return "." not in os.path.basename(path) and any(os.path.isfile(full + ext) for ext in MODULE_EXTENSIONS)


def walk(root):
    for folder, subfolders, files in os.walk(root):
        rel_folder = os.path.relpath(folder, root)
        if rel_folder == ".":
            subfolders[:] = [s for s in subfolders if not s.startswith("build") and s != ".git"]
        subfolders.sort()
        for name in sorted(files):
            yield os.path.normpath(os.path.join(rel_folder, name))


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: check_doc_paths.py REPO_ROOT\n")
        return 2
    root = os.path.abspath(argv[1])
    checked, missing = 0, []
    file_names = {os.path.basename(rel_path) for rel_path in walk(root)}
    for rel_path in walk(root):
        try:
            with open(os.path.join(root, rel_path), encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, OSError):
            continue  # binary data (models, tensors, fuzz corpora)
        readable = readable_text(rel_path, text)
        if readable is None:
            continue
        for line, path, bare in references(rel_path, readable):
            checked += 1
            if bare:
                found = path in file_names or path in EXTERNAL_NAMES
            elif path.startswith("..") or os.path.isabs(path):
                found, path = False, path + " (outside the repository)"
            else:
                found = exists(root, path) or any(path.startswith(prefix) for prefix in ALLOWED_MISSING)
            if not found:
                missing.append((rel_path, line, path))
    for rel_path, line, path in missing:
        print("%s:%d: cites %s, which does not exist" % (rel_path, line, path))
    if missing:
        print("%d of %d references name nothing in %s" % (len(missing), checked, root))
        return 1
    print("%d references checked, all exist" % checked)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
