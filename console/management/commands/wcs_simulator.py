"""Run the WCS simulator (see console/simulator/wcs.py): vehicle snapshot + driving tidy jobs."""

import signal
import threading
from datetime import timedelta

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from console.simulator.wcs import Faults, SnapshotServer, WcsSimulator, log, run_forever


def _probability(value: str) -> float:
    p = float(value)
    if not 0 <= p <= 1:
        raise ValueError("a probability is between 0 and 1")
    return p


class Command(BaseCommand):
    help = ("Simulate WCS: serve the vehicle snapshot and drive active tidy jobs 2 -> 3 -> finished through "
            "the console's real endpoints, optionally with faults, optionally creating AUTOMATIC tidies.")

    def add_arguments(self, parser):
        parser.add_argument("--console-url", default="http://127.0.0.1:8000", help="where the console listens")
        parser.add_argument("--token", default=None, help="callback token (default: WCS_CALLBACK_TOKEN)")
        parser.add_argument("--rate", type=float, default=2.0, help="WCS reports per second (default 2)")
        parser.add_argument("--create-workflows", action="store_true",
                            help="keep creating AUTOMATIC tidy workflows from free trays and empty spaces")
        parser.add_argument("--create-every", type=float, default=6.0, help="seconds between creations (default 6)")
        parser.add_argument("--max-active", type=int, default=10,
                            help="create only while fewer ACTIVE workflows exist (default 10)")
        parser.add_argument("--max-steps", type=int, default=3, help="steps per created workflow, 1..N (default 3)")
        parser.add_argument("--snapshot-url", default=None, help="serve the snapshot here (default: WCS_SNAPSHOT_URL)")
        parser.add_argument("--no-snapshot-server", action="store_true", help="do not serve the vehicle snapshot")
        parser.add_argument("--vehicles", type=int, default=4, help="vehicles in the snapshot (default 4)")
        parser.add_argument("--busy-vehicles", type=int, default=1, help="of which not available (default 1)")
        faults = parser.add_argument_group("faults (probabilities 0..1)")
        faults.add_argument("--drop-ack", type=_probability, default=0.0,
                            help="a finish's acknowledgement is lost: the finish is re-sent a second later")
        faults.add_argument("--duplicate", type=_probability, default=0.0,
                            help="a finish is delivered twice back to back")
        faults.add_argument("--late", type=_probability, default=0.0,
                            help="'dispatched' is delivered after 'executing' (an old event; the console refuses it)")
        faults.add_argument("--late-seconds", type=float, default=3.0)
        faults.add_argument("--stop-between-steps", type=_probability, default=0.0,
                            help="after a finished step the vehicle stops before the next job")
        faults.add_argument("--stall-seconds", type=float, default=10.0)
        faults.add_argument("--wrong-tray", type=_probability, default=0.0,
                            help="a finish names another tray than the job's, once per job (needs --identity)")
        parser.add_argument("--identity", action="store_true",
                            help="report load identity and order: tray_code and location on each finish, a "
                                 "sequence per job on every report")
        parser.add_argument("--leave-stalled-minutes", type=int, default=0,
                            help="leave alone the workflows whose job has not changed for this many minutes "
                                 "when the simulator starts, as a faulted vehicle would (0: drive everything)")
        parser.add_argument("--seed", type=int, default=None, help="random seed (repeatable fault choices)")
        parser.add_argument("--iterations", type=int, default=0, help="stop after N ticks (0: until SIGTERM)")

    def handle(self, *args, **o):
        if o["rate"] <= 0:
            raise CommandError("--rate must be positive")
        token = o["token"] or settings.WCS_CALLBACK_TOKEN
        if not token:
            raise CommandError("no callback token: set WCS_CALLBACK_TOKEN or pass --token")
        sim = WcsSimulator(
            console_url=o["console_url"], token=token, create_workflows=o["create_workflows"],
            create_every=o["create_every"], max_active=o["max_active"], max_steps=o["max_steps"], seed=o["seed"],
            identity=o["identity"],
            faults=Faults(drop_ack=o["drop_ack"], duplicate=o["duplicate"], late=o["late"],
                          late_seconds=o["late_seconds"], stop_between_steps=o["stop_between_steps"],
                          stall_seconds=o["stall_seconds"], wrong_tray=o["wrong_tray"]))
        if o["leave_stalled_minutes"] > 0:
            left = sim.leave_stalled(before=timezone.now() - timedelta(minutes=o["leave_stalled_minutes"]))
            if left:
                log.info("leaving stalled workflow(s) %s alone (a vehicle fault)", ", ".join(map(str, left)))
        # Handlers first: a SIGTERM at any moment from here on is a clean stop.
        stop = threading.Event()

        def _stop(signum, frame):
            stop.set()

        signal.signal(signal.SIGTERM, _stop)
        signal.signal(signal.SIGINT, _stop)
        server = None
        if not o["no_snapshot_server"]:
            server = SnapshotServer(o["snapshot_url"] or settings.WCS_SNAPSHOT_URL, vehicles=o["vehicles"],
                                    busy=o["busy_vehicles"])
            try:
                url = server.start()
                log.info("vehicle snapshot served on %s (%d vehicles, %d busy)", url, o["vehicles"],
                         o["busy_vehicles"])
            except OSError as exc:
                log.warning("cannot serve the vehicle snapshot on %s:%s (%s); driving jobs without it",
                            server.host, server.port, exc)
                server = None

        log.info("WCS simulator driving %s at %.1f reports/s%s", o["console_url"], o["rate"],
                 "; creating AUTOMATIC tidy workflows" if o["create_workflows"] else "")
        try:
            if o["iterations"]:
                for _ in range(o["iterations"]):
                    if stop.is_set():
                        break
                    sim.tick()
            else:
                run_forever(sim, rate=o["rate"], stop=stop)
        finally:
            if server is not None:
                server.stop()
            log.info("WCS simulator stopped: %s",
                     ", ".join(f"{k}: {v}" for k, v in sorted(sim.stats.items())) or "nothing sent")
