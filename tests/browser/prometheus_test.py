#!/usr/bin/env python3
"""A tuned job's metrics through a real node-exporter and a real Prometheus, and the console
pages that Prometheus serves, looked at in headless Chromium.

    prometheus_test.py CLUSTER_DIR BIN_DIR OUT_DIR PLUGIN

CLUSTER_DIR the local Slurm cluster (scripts/local-cluster.sh; fixture stoker_cluster)
BIN_DIR     the folder with stoker_train and stoker_make_data (build/runtime/examples)
OUT_DIR     where the console pages' screenshots (and, on failure, the daemons' logs) go
PLUGIN      the built spank_stoker.so: the cluster's plugstack line is reset to load it with
            no arguments, so settings another test left behind do not leak in

Starts Debian's prometheus-node-exporter (textfile collector only, on a folder of its own)
and Debian's prometheus scraping it every second, both on 127.0.0.1 at ports picked now,
with stoker's consoles/ as its console templates; the packages' own services are not used.
Runs a tuned two-node job whose ranks write their metrics there (STOKER_METRICS with {job}
and {rank}), then checks: each file passes `promtool check metrics` (format and naming);
Prometheus holds exactly the files' final numbers under jobid/job_id/rank/node, with its own
`job` label intact; the job's wait share and throughput (the gauge and rate() of the
counter) are there, and so is the job in every query that the admin guide and the Grafana
dashboard (consoles/grafana-stoker.json) give; the admin guide's join with jobstats' GPU
exporter (its series written by the test, no GPU here) finds the job when its GPUs idle and
only then; the job's and the node's pages show the
job's id, its wait share and plots with points, with no script errors; a hostile label
value is not rendered as HTML.
Stops every process it started. Exit 0 passed, 1 failed, 77 skipped (no cluster, or the
Debian packages prometheus / prometheus-node-exporter / chromium are not installed).
"""
import json
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

SKIP = 77
SRC = pathlib.Path(__file__).resolve().parents[2]
BROWSER_CHECK = SRC / "tests/support/browser_check.py"
failures = []


def check(what, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + what + ("" if ok or not detail else f": {detail}"))
    if not ok:
        failures.append(what)
    return ok


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Daemons:
    """The processes this test starts, each in its own session, all stopped by close()."""

    def __init__(self, logs):
        self.logs, self.procs = logs, []

    def start(self, name, argv):
        log = open(self.logs / f"{name}.log", "w")
        self.procs.append((name, subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                                  start_new_session=True), log))

    def close(self):
        """Stops them all; the names of any whose session still has a process after."""
        left = []
        for name, p, log in self.procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
            log.close()
            try:
                os.killpg(p.pid, 0)  # anything it started, still in its session?
                left.append(name)
            except ProcessLookupError:
                pass
        self.procs = []
        return left


def get(url, timeout=10):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def wait_for(what, probe, timeout=60):
    """probe() until it returns something true; that value, or None after the timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = probe()
            if value:
                return value
        except OSError:
            pass
        time.sleep(0.5)
    check(what, False, f"not within {timeout} s")
    return None


class PromApi:
    def __init__(self, port):
        self.base = f"http://127.0.0.1:{port}"

    def query(self, expr):
        answer = json.loads(get(f"{self.base}/api/v1/query?" +
                                urllib.parse.urlencode({"query": expr})))
        if answer.get("status") != "success":
            raise RuntimeError(f"query {expr!r}: {answer}")
        return answer["data"]["result"]

    def scalar(self, expr):
        result = self.query(expr)
        return float(result[0]["value"][1]) if result else None


def parse_prom(text):
    """{(name, frozenset(labels)): value} of a metrics file (its format is checked by promtool)."""
    samples = {}
    for line in text.splitlines():
        m = re.match(r'^([a-z_]+)\{(.*)\} (\S+)$', line)
        if m:
            labels = frozenset(re.findall(r'([a-z_]+)="([^"]*)"', m.group(2)))
            samples[(m.group(1), labels)] = float(m.group(3))
    return samples


def run_job(cluster, bin_dir, work, textfile):
    """The tuned job: two ranks on n1 and n2, a few seconds of image training, metrics every
    0.5 s. Its status and output."""
    env = dict(os.environ, STOKER_METRICS=f"{textfile}/stoker-{{job}}-{{rank}}.prom",
               STOKER_METRICS_INTERVAL="0.5")
    argv = [str(SRC / "tests/support/mpi_launch.sh"), str(SRC / "tests/cluster/with_cluster.sh"),
            str(cluster), "srun", "-N2", "-n2", "--ntasks-per-node=1", "--cpus-per-task=2",
            "--mpi=pmix", "--stoker", "--stoker-profile=cv", "--stoker-bind=even",
            str(bin_dir / "stoker_train"), "--device", "cpu", "--data", str(work / "images"),
            "--kind", "images", "--size", "32", "--epochs", "15", "--batch-size", "32"]
    job = subprocess.run(argv, env=env, cwd=work, capture_output=True, text=True, timeout=240)
    return job.returncode, job.stdout + job.stderr


def check_files(textfile):
    """The job's files, checked by promtool. ({rank: parsed file}, job id) or (None, None)."""
    files = sorted(textfile.glob("stoker-*-*.prom"))
    jobs = sorted({int(f.name.split("-")[1]) for f in files if f.name.split("-")[1].isdigit()})
    if not check("the ranks wrote their files as stoker-{job}-{rank}.prom", jobs,
                 str([f.name for f in files])):
        return None, None
    job = str(jobs[-1])  # the last launch's (mpi_launch.sh may have launched twice)
    mine = {f.name.split("-")[2][:-5]: f for f in files if f.name.split("-")[1] == job}
    check("one file per rank", sorted(mine) == ["0", "1"], str(sorted(mine)))
    for rank, f in mine.items():
        lint = subprocess.run(["promtool", "check", "metrics"], input=f.read_text(),
                              capture_output=True, text=True)
        check(f"promtool check metrics passes rank {rank}'s file (format and names)",
              lint.returncode == 0 and not lint.stdout.strip(), lint.stdout + lint.stderr)
    return {r: parse_prom(f.read_text()) for r, f in mine.items()}, job


def file_value(files, rank, name):
    for (n, labels), v in files[rank].items():
        if n == name:
            return v, dict(labels)
    return None, {}


def check_prometheus(api, files, job, trainer_out):
    sel = f'jobid="{job}"'
    # Prometheus holds the final files once its scrape after the job's last write is in.
    final = {r: file_value(files, r, "stoker_last_write_timestamp_seconds")[0] for r in files}
    def scraped_final():
        got = {s["metric"]["rank"]: float(s["value"][1])
               for s in api.query(f"stoker_last_write_timestamp_seconds{{{sel}}}")}
        return got == final
    wait_for("Prometheus scrapes the ranks' final files", scraped_final)

    series = api.query(f"stoker_consumer_wait_ratio{{{sel}}}")
    check("Prometheus has the job's wait share for each rank", len(series) == 2, str(series))
    for s in series:
        m, rank = s["metric"], s["metric"].get("rank")
        value, labels = file_value(files, rank, "stoker_consumer_wait_ratio") if rank in files \
            else (None, {})
        check(f"rank {rank}: the wait share is the file's, between 0 and 1",
              value is not None and float(s["value"][1]) == value and 0 <= value <= 1,
              f"{s['value'][1]} vs {value}")
        check(f"rank {rank}: labels jobid, job_id (its earlier name), step_id, rank, node as "
              "the file has them",
              all(m.get(k) == labels.get(k) for k in ("jobid", "job_id", "step_id", "rank", "node"))
              and m.get("jobid") == m.get("job_id") == job
              and m.get("node") == f"n{int(rank) + 1}", str(m))
        check(f"rank {rank}: Prometheus's own job label is the scrape job's, not renamed",
              m.get("job") == "stoker-nodes" and "exported_job" not in m, str(m))
    mean_share = api.scalar(f"avg(stoker_consumer_wait_ratio{{{sel}}})")
    throughput = api.scalar(f"sum(stoker_samples_per_second{{{sel}}})")
    files_throughput = sum(file_value(files, r, "stoker_samples_per_second")[0] for r in files)
    check("the job's throughput (samples/s) is the ranks' sum",
          throughput and abs(throughput - files_throughput) <= 1e-6 * files_throughput,
          f"{throughput} vs {files_throughput}")
    rate = api.scalar(f"sum(rate(stoker_samples_total{{{sel}}}[1m]))")
    check("rate() of the samples counter gives a throughput", rate and rate > 0, str(rate))
    delivered = api.scalar(f"sum(stoker_samples_total{{{sel}}})")
    said = re.search(r"done: \d+ steps, (\d+) samples.*", trainer_out)
    check("the samples counted are the samples the trainer says it trained on",
          said and delivered == float(said.group(1)), f"{delivered} vs {said and said.group(1)}")
    print(f"     job {job}: input wait {100 * mean_share:.1f} % (mean over ranks), "
          f"{throughput:.1f} samples/s; the trainer said: {said and said.group(0)}...")
    return mean_share


def check_queries(api, job, where, queries):
    """Each query runs; those for one job (or the top jobs) find the test job."""
    for q in queries:
        try:
            result = api.query(q)
        except (OSError, RuntimeError) as e:
            check(f"{where}'s query {q}", False, str(e))
            continue
        if f'"{job}"' in q or q.startswith("topk"):
            check(f"{where}'s query {q} finds the job",
                  any(r["metric"].get("jobid", job) == job for r in result), str(result))


def check_shipped_queries(api, job):
    """The queries of the admin guide's table in "Prometheus wiring" and of the Grafana
    dashboard beside the console pages, on the test job."""
    guide = (SRC / "docs/admin-guide.md").read_text()
    section = guide.split("\n## Prometheus wiring\n")[1].split("\n## ")[0]
    queries = re.findall(r"^\| [^|`]+ \| `([^`]+)` \|$", section, re.M)
    check("the admin guide's PromQL table is there", len(queries) >= 5, str(queries))
    check_queries(api, job, "the admin guide", [q.replace('"4242"', f'"{job}"') for q in queries])
    dashboard = json.loads((SRC / "consoles/grafana-stoker.json").read_text())
    exprs = [t["expr"] for panel in dashboard["panels"] for t in panel["targets"]]
    check("the Grafana dashboard has its panels' queries", len(exprs) >= 5, str(exprs))
    check_queries(api, job, "the Grafana dashboard", [e.replace("$jobid", job) for e in exprs])


def check_pages(api, port, job, out):
    base = f"http://127.0.0.1:{port}/consoles"
    # The page's own expression, so its number and the expected text round alike.
    share = api.scalar(
        f'100 * avg(last_over_time(stoker_consumer_wait_ratio{{jobid="{job}"}}[1d]))')
    looked = subprocess.run(
        [sys.executable, str(BROWSER_CHECK), f"{base}/stoker-job.html?jobid={job}",
         "--screenshot", str(out / "console-job.png"), "--expect-text", f"Job {job}: input health",
         "--expect-text", f"{share:.1f} %", "--expect-selector", "#wait svg path",
         "--expect-selector", "#throughput svg path", "--expect-selector", "#depth svg path"],
        capture_output=True, text=True, timeout=120)
    check("the job's console page shows its id, its wait share and plots with points, no "
          "script errors", looked.returncode == 0, looked.stdout + looked.stderr)
    looked = subprocess.run(
        [sys.executable, str(BROWSER_CHECK), f"{base}/stoker-node.html?node=n1&range=60",
         "--screenshot", str(out / "console-node.png"), "--expect-text", "Node n1: input health",
         "--expect-text", f"job {job}", "--expect-selector", "#wait svg path"],
        capture_output=True, text=True, timeout=120)
    check("node n1's console page lists the job with a plot with points, no script errors",
          looked.returncode == 0, looked.stdout + looked.stderr)
    # Bad input: the pages refuse a job id or node name that is not one, and never print one
    # as HTML (a user can write any label value into the textfile folder).
    page = get(f"{base}/stoker-job.html?job_id={job}")
    check("the job's page still answers to job_id=, the parameter's earlier name",
          f"Job {job}: input health" in page, page[-400:])
    page = get(f"{base}/stoker-job.html?jobid=" + urllib.parse.quote('1"}<b>x</b>'))
    check("a job id that is not a number: one clear line, escaped",
          "Give the Slurm job id" in page and "<b>x</b>" not in page, page[-400:])
    page = get(f"{base}/stoker-node.html")
    check("the all-nodes page lists n1 and n2 and prints no user-written markup",
          "stoker-node.html?node=n1" in page and "stoker-node.html?node=n2" in page
          and "<img" not in page, page[-600:])


# The GPU exporter jobstats uses (plazonic/nvidia_gpu_prometheus_exporter): its per-GPU series
# carry jobid (the Slurm job id) among their labels, and nvidia_gpu_jobId holds the job id as
# its value. No GPU here: the test writes such series itself, in that format.
GPU_FAMILIES = {
    "nvidia_gpu_duty_cycle": "Percent of time over the past sample period during which one or "
                             "more kernels were executing on the GPU device",
    "nvidia_gpu_jobId": "JobId number of a job currently using this GPU as reported by Slurm",
}


def write_gpu_series(textfile, gpus):
    """gpus: [(jobid, minor, duty cycle %)], as the GPU exporter would give them."""
    lines = []
    for name, help_text in GPU_FAMILIES.items():
        lines += [f"# HELP {name} {help_text}", f"# TYPE {name} gauge"]
        for jobid, minor, duty in gpus:
            labels = (f'GPU_I_ID="",jobid="{jobid}",minor_number="{minor}",name="NVIDIA H200",'
                      f'ordinal="{minor}",userid="1000",uuid="GPU-{jobid}-{minor}"')
            value = duty if name == "nvidia_gpu_duty_cycle" else jobid
            lines.append(f"{name}{{{labels}}} {value}")
    tmp = textfile / "gpu.prom.tmp"
    tmp.write_text("\n".join(lines) + "\n")
    tmp.rename(textfile / "gpu.prom")


def check_jobstats_join(api, job, textfile):
    """The admin guide's join of stoker's series to jobstats' GPU exporter's, on jobid: the job
    is found when its GPUs idle and it waited for input, not when its GPUs are busy, and not a
    job with GPU series but no stoker series. The duty cycle's window is cut from 10 minutes to
    3 seconds so that each case sees only its own GPU values; the wait threshold is half the
    job's measured wait (this machine's speed decides that share, not the query)."""
    guide = (SRC / "docs/admin-guide.md").read_text()
    section = guide.split("\n### Beside jobstats\n")[1].split("\n## ")[0]
    join, one_job = re.findall(r"```promql\n(.*?)```", section, re.S)
    waited = api.scalar(f'max(rate(stoker_consumer_wait_seconds_total{{jobid="{job}"}}[10m]))')
    if not check("the job's input wait over the last 10 minutes is above 0", waited, str(waited)):
        return
    join = join.replace("nvidia_gpu_duty_cycle[10m]", "nvidia_gpu_duty_cycle[3s]").replace(
        "> 0.2", f"> {waited / 2}")
    other = "999999"  # a job with GPUs and no stoker series

    def holds(duty, seconds):  # the job's GPU series were all at `duty` for that long
        window = f'nvidia_gpu_duty_cycle{{jobid="{job}"}}[{seconds}s]'
        got = api.query(f"min_over_time({window}) == {duty} and max_over_time({window}) == {duty}")
        return len(got) == 2
    for duty, found in ((95, []), (12, [job])):
        write_gpu_series(textfile, [(job, 0, duty), (job, 1, duty), (other, 0, 12)])
        if not wait_for(f"Prometheus holds the job's GPUs at {duty} % for 3 s",
                        lambda: holds(duty, 3)):
            return
        result = api.query(join)
        jobs = sorted(r["metric"].get("jobid") for r in result)
        check(f"the jobstats join with the GPUs at {duty} % finds {found or 'no job'}",
              jobs == found and all(float(r["value"][1]) == duty for r in result), str(result))
    # A subquery's first point looks back to the last sample before its range: 8 s at 12 %
    # keep the earlier 95 % out of a 3 s subquery.
    if not wait_for("Prometheus holds the job's GPUs at 12 % for 8 s", lambda: holds(12, 8)):
        return
    one = api.scalar(one_job.replace("4242", job).replace("[10m:]", "[3s:]"))
    check("the per-job query for older GPU exporters gives the job's GPU utilisation", one == 12,
          str(one))


def write_hostile_file(textfile):
    """A file any user of the node could write: markup in a label value. Its HELP and TYPE
    lines are stoker's own (node-exporter drops a family whose files disagree on them)."""
    real = next(textfile.glob("stoker-*.prom")).read_text().splitlines()
    family = [l for l in real if re.match(r"# (HELP|TYPE) stoker_consumer_wait_ratio ", l)]
    (textfile / "hostile.prom").write_text("\n".join(family) + "\n" +
        'stoker_consumer_wait_ratio{job_id="1",node="<img src=x onerror=alert(1)>",rank="0"} 0.5\n')


def main():
    if len(sys.argv) != 5:
        print(__doc__)
        return 2
    cluster, bin_dir, out, plugin = (pathlib.Path(a).resolve() for a in sys.argv[1:])
    if (cluster / "skip-reason").exists():
        print(f"SKIP: no local cluster: {(cluster / 'skip-reason').read_text().strip()}")
        return SKIP
    missing = [b for b in ("prometheus", "prometheus-node-exporter", "promtool", "chromium",
                           "chromedriver") if not shutil.which(b)]
    if missing:
        print(f"SKIP: {', '.join(missing)} not installed (apt-get install prometheus "
              "prometheus-node-exporter chromium chromium-driver)")
        return SKIP
    (cluster / "plugstack.conf.d" / "stoker.conf").write_text(f"optional {plugin}\n")
    work = cluster / "jobs" / "prometheus"  # not /tmp: node n2 has a private /tmp
    shutil.rmtree(work, ignore_errors=True)
    textfile = work / "textfile"
    textfile.mkdir(parents=True)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*"):
        old.unlink()
    # 320x240 JPEGs to decode on the one worker core each rank gets: the loop waits for them.
    subprocess.run([str(bin_dir / "stoker_make_data"), "images", str(work / "images"),
                    "--classes", "4", "--per-class", "64", "--width", "320", "--height", "240"],
                   check=True, stdout=subprocess.DEVNULL)
    exporter_port, prom_port = free_port(), free_port()
    (work / "prometheus.yml").write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        "scrape_configs:\n  - job_name: stoker-nodes\n    static_configs:\n"
        f"      - targets: ['127.0.0.1:{exporter_port}']\n")
    daemons = Daemons(work)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("stopped by SIGTERM (ctest's timeout?)"))
    try:
        daemons.start("node-exporter", [
            "prometheus-node-exporter", f"--web.listen-address=127.0.0.1:{exporter_port}",
            "--collector.disable-defaults", "--collector.textfile",
            f"--collector.textfile.directory={textfile}"])
        daemons.start("prometheus", [
            "prometheus", f"--config.file={work / 'prometheus.yml'}",
            f"--storage.tsdb.path={work / 'data'}", f"--web.listen-address=127.0.0.1:{prom_port}",
            f"--web.console.templates={SRC / 'consoles'}",
            f"--web.console.libraries={SRC / 'consoles'}"])
        api = PromApi(prom_port)
        if not wait_for("Prometheus scrapes node-exporter",
                        lambda: api.scalar('up{job="stoker-nodes"}') == 1):
            raise SystemExit(1)
        rc, trainer_out = run_job(cluster, bin_dir, work, textfile)
        if not check("the tuned job ran", rc == 0, trainer_out[-3000:]):
            raise SystemExit(1)
        files, job = check_files(textfile)
        if files and len(files) == 2:
            write_hostile_file(textfile)
            check_prometheus(api, files, job, trainer_out)
            check_shipped_queries(api, job)
            check_jobstats_join(api, job, textfile)
            check_pages(api, prom_port, job, out)
    finally:
        left = daemons.close()
        check("every process the test started has stopped", not left, str(left))
        if failures:
            for log in work.glob("*.log"):
                shutil.copy(log, out / log.name)
    if failures:
        print(f"{len(failures)} check(s) failed; logs and screenshots in {out}")
        return 1
    shutil.rmtree(work, ignore_errors=True)
    print(f"all Prometheus checks passed; screenshots in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
