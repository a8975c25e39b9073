"""Run test cases and benchmark workloads through the real Flink CEP 2.3 (the oracle).

The Java side is ``FlinkCepOracle.java`` beside this file. This module finds the Flink jars
(``flink-cep-2.3.0.jar``, ``flink-dist-2.3.0.jar``, log4j) from PyPI's
``apache-flink-libraries==2.3.0``, compiles the oracle with ``javac`` into a cache folder keyed
by a hash of the source, and runs it with ``java``. See docs/oracle-format.md.

Where the jars come from, first hit wins:

1. ``$FLOWCEP_FLINK_LIB`` (a folder holding the jars);
2. an installed ``pyflink/lib``: in the running interpreter, or in a ``.venv*`` folder of the
   repository (for example ``.venv-flink``, made by the test set-up);
3. the cache, ``$FLOWCEP_CACHE/flink-2.3.0/lib`` (default ``~/.cache/flowcep``), filled on
   first use by ``pip download --no-deps apache-flink-libraries==2.3.0`` (about 330 MB).

Without ``java``/``javac`` the oracle is unavailable: ``OracleUnavailable`` is raised, with the
message ``JDK 17 needed for the Flink oracle``, and the tests skip.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

FLINK_VERSION = "2.3.0"
HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
SOURCE = HERE / "FlinkCepOracle.java"
JDK_NEEDED = "JDK 17 needed for the Flink oracle"

JARS = (f"flink-cep-{FLINK_VERSION}.jar", f"flink-dist-{FLINK_VERSION}.jar")
LOG4J_PREFIXES = ("log4j-api-", "log4j-core-", "log4j-slf4j-impl-", "log4j-1.2-api-")

LOG4J_CONFIG = """\
rootLogger.level = ERROR
rootLogger.appenderRef.console.ref = ConsoleAppender
appender.console.name = ConsoleAppender
appender.console.type = CONSOLE
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss,SSS} %-5p %c{1} - %m%n
"""

# Options Flink's own scripts pass to Java 17 (harmless for what the oracle does).
JVM_OPTS = (
    "-XX:+IgnoreUnrecognizedVMOptions",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
    "--add-opens=java.base/java.time=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
    "--add-opens=java.base/java.net=ALL-UNNAMED",
)


class OracleUnavailable(RuntimeError):
    """The Flink oracle cannot run here (no JDK, or the jars cannot be had)."""


class OracleFailed(RuntimeError):
    """The Java process failed (not a Flink answer: a bug of the oracle or of its input)."""


def cache_dir() -> Path:
    root = os.environ.get("FLOWCEP_CACHE")
    base = Path(root) if root else Path.home() / ".cache" / "flowcep"
    return base / f"flink-{FLINK_VERSION}"


def _has_jars(folder: Path) -> bool:
    return all((folder / j).is_file() for j in JARS)


def _candidate_lib_dirs() -> Iterable[Path]:
    env = os.environ.get("FLOWCEP_FLINK_LIB")
    if env:
        yield Path(env)
    for entry in sys.path:
        if entry:
            yield Path(entry) / "pyflink" / "lib"
    for venv in sorted(glob.glob(str(REPO / ".venv*"))):
        for site in sorted(glob.glob(os.path.join(venv, "lib", "python3*", "site-packages"))):
            yield Path(site) / "pyflink" / "lib"
    yield cache_dir() / "lib"


def _download_jars(target: Path) -> None:
    """pip download the wheel and unpack the jars the oracle needs into ``target``."""
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="flowcep-flink-") as tmp:
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--quiet",
            f"apache-flink-libraries=={FLINK_VERSION}",
            "-d",
            tmp,
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        wheels = glob.glob(os.path.join(tmp, "apache_flink_libraries-*.whl"))
        if proc.returncode != 0 or not wheels:
            raise OracleUnavailable(
                f"could not download apache-flink-libraries=={FLINK_VERSION}: {proc.stderr.strip()[-500:]}"
            )
        with zipfile.ZipFile(wheels[0]) as whl:
            for name in whl.namelist():
                base = os.path.basename(name)
                if not name.startswith("pyflink/lib/"):
                    continue
                if base in JARS or base.startswith(LOG4J_PREFIXES):
                    part = target / (base + ".part")
                    with whl.open(name) as src, open(part, "wb") as dst:
                        shutil.copyfileobj(src, dst)
                    part.replace(target / base)


def find_lib_dir(download: bool = True) -> Path:
    """The folder of the Flink jars (downloading them into the cache if needed and allowed)."""
    for folder in _candidate_lib_dirs():
        if _has_jars(folder):
            return folder
    if not download:
        raise OracleUnavailable("Flink jars not found and download disabled")
    target = cache_dir() / "lib"
    _download_jars(target)
    if not _has_jars(target):
        raise OracleUnavailable(f"Flink jars missing in {target} after download")
    return target


def java_tools() -> tuple[str, str]:
    java = shutil.which("java")
    javac = shutil.which("javac")
    if not java or not javac:
        raise OracleUnavailable(JDK_NEEDED)
    return java, javac


def classpath_jars(lib: Path) -> list[str]:
    jars = [str(lib / j) for j in JARS]
    for prefix in LOG4J_PREFIXES:
        jars += sorted(glob.glob(str(lib / (prefix + "*.jar"))))
    return jars


class FlinkOracle:
    """The compiled oracle; ``run_cases`` and ``run_bench`` start one JVM per call."""

    def __init__(self, download: bool = True) -> None:
        self.java, self.javac = java_tools()
        self.lib = find_lib_dir(download)
        self.jars = classpath_jars(self.lib)
        self.classes = self._compile()
        self.log4j = cache_dir() / "log4j2-oracle.properties"
        if not self.log4j.is_file() or self.log4j.read_text() != LOG4J_CONFIG:
            self.log4j.parent.mkdir(parents=True, exist_ok=True)
            self.log4j.write_text(LOG4J_CONFIG)

    def _compile(self) -> Path:
        source = SOURCE.read_bytes()
        digest = hashlib.sha256(source + "\0".join(self.jars).encode()).hexdigest()[:16]
        out = cache_dir() / f"classes-{digest}"
        if (out / "FlinkCepOracle.class").is_file():
            return out
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix="classes-", dir=out.parent))
        proc = subprocess.run(
            [self.javac, "-nowarn", "-d", str(tmp), "-cp", os.pathsep.join(self.jars), str(SOURCE)],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            raise OracleFailed(f"javac failed:\n{proc.stdout}\n{proc.stderr}")
        try:
            tmp.replace(out)
        except OSError:  # compiled concurrently by another process
            shutil.rmtree(tmp, ignore_errors=True)
        return out

    def command(self, *args: str, heap: str = "2g") -> list[str]:
        cp = os.pathsep.join([str(self.classes), *self.jars])
        return [
            self.java,
            f"-Xmx{heap}",
            *JVM_OPTS,
            f"-Dlog4j2.configurationFile={self.log4j}",
            "-cp",
            cp,
            "FlinkCepOracle",
            *args,
        ]

    def run_cases(
        self, cases: Sequence[dict[str, Any]], batch: int = 100, timeout: float = 1800
    ) -> list[dict]:
        """Run cases through Flink; one result per case, in order (see docs/oracle-format.md)."""
        if not cases:
            return []
        with tempfile.TemporaryDirectory(prefix="flowcep-oracle-") as tmp:
            inp = Path(tmp) / "cases.json"
            out = Path(tmp) / "results.jsonl"
            inp.write_text(json.dumps(list(cases)))
            proc = subprocess.run(
                self.command("cases", str(inp), str(out), str(batch)),
                capture_output=True,
                text=True,
                timeout=timeout,
            )
            if proc.returncode != 0 or not out.is_file():
                raise OracleFailed(f"oracle exited with {proc.returncode}:\n{proc.stderr[-4000:]}")
            self.last_stderr = proc.stderr
            results = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
        if len(results) != len(cases):
            raise OracleFailed(f"{len(cases)} cases in, {len(results)} results out")
        return results

    def serve(self) -> OracleServer:
        """A long-lived JVM (one MiniCluster) answering many ``run_cases`` calls."""
        return OracleServer(self)

    def run_bench(
        self, spec: dict[str, Any], events_csv: str | Path, timeout: float = 3600, heap: str = "4g"
    ) -> dict[str, Any]:
        """Run one workload (pattern + CSV events) for throughput; see docs/oracle-format.md."""
        with tempfile.TemporaryDirectory(prefix="flowcep-bench-") as tmp:
            spec_path = Path(tmp) / "spec.json"
            spec_path.write_text(json.dumps(spec))
            proc = subprocess.run(
                self.command("bench", str(spec_path), str(events_csv), heap=heap),
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        if proc.returncode != 0:
            raise OracleFailed(f"oracle bench exited with {proc.returncode}:\n{proc.stderr[-4000:]}")
        lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
        if not lines:
            raise OracleFailed(
                f"no result from the oracle bench:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
            )
        return json.loads(lines[-1])


class OracleServer:
    """``FlinkCepOracle serve``: saves the JVM and MiniCluster start (a few seconds) per batch."""

    def __init__(self, oracle: FlinkOracle) -> None:
        self.oracle = oracle
        self.tmp = tempfile.TemporaryDirectory(prefix="flowcep-oracle-")
        self.err = open(Path(self.tmp.name) / "stderr.txt", "w+")
        self.proc = subprocess.Popen(
            oracle.command("serve"), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err, text=True
        )
        self.calls = 0

    def run_cases(self, cases: Sequence[dict[str, Any]], batch: int = 100) -> list[dict]:
        if not cases:
            return []
        self.calls += 1
        inp = Path(self.tmp.name) / f"cases-{self.calls}.json"
        out = Path(self.tmp.name) / f"results-{self.calls}.jsonl"
        inp.write_text(json.dumps(list(cases)))
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{inp} {out} {batch}\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline().strip()
        if answer != "done":
            self.err.seek(0)
            raise OracleFailed(f"oracle server: {answer or 'exited'}\n{self.err.read()[-4000:]}")
        results = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
        inp.unlink()
        out.unlink()
        if len(results) != len(cases):
            raise OracleFailed(f"{len(cases)} cases in, {len(results)} results out")
        return results

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.close()
                self.proc.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        self.err.close()
        self.tmp.cleanup()

    def __enter__(self) -> OracleServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_ORACLE: FlinkOracle | None = None


def get_oracle(download: bool = True) -> FlinkOracle:
    """A process-wide oracle (compiled once); raises OracleUnavailable."""
    global _ORACLE
    if _ORACLE is None:
        _ORACLE = FlinkOracle(download)
    return _ORACLE


def run_cases(cases: Sequence[dict[str, Any]], batch: int = 100) -> list[dict]:
    return get_oracle().run_cases(cases, batch=batch)


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description="Run oracle cases (JSON list or JSON lines) through Flink CEP")
    ap.add_argument("cases")
    ap.add_argument("--out", default="-")
    ap.add_argument("--batch", type=int, default=100)
    args = ap.parse_args(argv)
    text = Path(args.cases).read_text()
    cases = (
        json.loads(text)
        if text.lstrip().startswith("[")
        else [json.loads(x) for x in text.splitlines() if x.strip()]
    )
    results = run_cases(cases, batch=args.batch)
    dump = "\n".join(json.dumps(r) for r in results) + "\n"
    if args.out == "-":
        sys.stdout.write(dump)
    else:
        Path(args.out).write_text(dump)
    return 0


if __name__ == "__main__":
    sys.exit(main())
