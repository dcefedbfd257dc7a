import json

from django.core.management.base import BaseCommand

from learning.selectors.status import status_report


class Command(BaseCommand):
    help = ("Show the live Celery workers and their hosts, the queues, and each project's last retrain: when, "
            "how it ended, which hosts trained and scored it, and where its time went.")

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true", dest="as_json",
                            help="print the report as one JSON object")

    def handle(self, *args, as_json: bool = False, **options):
        report = status_report()
        self.stdout.write(json.dumps(report) if as_json else "\n".join(_lines(report)))


def _lines(report: dict) -> list[str]:
    workers = report["workers"]
    lines = [f"Workers: {len(workers)} live on {len(report['hosts'])} host(s)"]
    for worker in workers:
        running = ", ".join(f"{task['task']}({', '.join(map(str, task['args']))})" for task in worker["running"])
        lines.append(f"  {worker['host']:<20} pid {worker['pid']:<7} {worker['node']}  up since "
                     f"{worker['started_at']}, last seen {worker['last_seen']}; "
                     + (f"running {running}" if running else "idle"))
    if not workers:
        lines.append("  none: start one with ./deidloop up (or celery -A config worker)")
    lines.append("Queues (messages waiting):")
    lines += [f"  {name:<20} {count}" for name, count in report["queues"].items()]
    lines.append("Last retrain per project:")
    for row in report["retrains"]:
        lines.append(f"  {row['project']} (#{row['project_id']}): retrain #{row['job']} {row['status']}, asked "
                     f"{row['asked_at']} ({row['reason']}), attempt {row['attempt']}"
                     + (f", model version #{row['model_version']}" if row["model_version"] else ""))
        scored = ", ".join(f"{host} ({count})" for host, count in sorted(row["scored_on"].items())) or "—"
        lines.append(f"    trained on {row['trained_on'] or '—'}; scored on {scored}")
        seconds = row["seconds"]
        lines.append("    " + "; ".join(f"{what} {_duration(seconds[what])}" for what in
                                         ("waiting", "training", "scoring", "total")))
        if row["error"]:
            lines.append(f"    error: {row['error']}")
    if not report["retrains"]:
        lines.append("  none yet")
    return lines


def _duration(seconds: float | None) -> str:
    return "—" if seconds is None else f"{seconds:.1f} s"
