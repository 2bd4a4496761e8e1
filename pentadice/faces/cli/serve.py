"""``pentadice serve``: the page and the JSON API over HTTP or HTTPS (:mod:`pentadice.faces.web`), until Ctrl-C."""

from __future__ import annotations

import importlib
import os
import sys

import click

from pentadice.faces.cli import loading
from pentadice.faces.cli.options import DATA_OPTION, DB_OPTION, PositiveNumber, RuleSetParam, open_games_database
from pentadice.game import rules
from pentadice.storage import KEEP_DAYS
from pentadice.support import exits, paths


def _each(module: str, reader: str):
    """The callback of a repeatable option whose values ``module.reader`` reads one by one (imported only when the
    option is given), repeats dropped; a value it refuses is a usage error naming the problem."""

    def read(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
        if not values:
            return ()
        parse = getattr(importlib.import_module(module), reader)
        try:
            return tuple(dict.fromkeys(parse(v) for v in values))
        except ValueError as e:
            raise click.BadParameter(str(e)) from None

    return read


def check_tls(cert: str, key: str) -> None:
    """The certificate and private key of ``--tls`` checked before anything loads: files that can be read,
    a PEM certificate (chain) and the private key that goes with it; a Failure in one line otherwise."""
    import ssl

    for what, path in (("certificate", cert), ("private key", key)):
        if not os.path.isfile(path):
            raise exits.Failure(f"cannot serve HTTPS: the {what} file {path} does not exist")
        if not os.access(path, os.R_OK):
            raise exits.Failure(f"cannot serve HTTPS: the {what} file {path} cannot be read (permission denied)")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(cert, key)
    except ssl.SSLError as e:
        reason = (e.reason or str(e)).lower().replace("_", " ")
        raise exits.Failure(
            f"cannot serve HTTPS: {cert} and {key} are not a PEM certificate and its private key ({reason})"
        ) from None
    except (OSError, ValueError) as e:
        raise exits.Failure(f"cannot serve HTTPS with {cert} and {key}: {getattr(e, 'strerror', None) or e}") from None


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (0.0.0.0: every network).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="Port (0: any free one).")
@click.option(
    "--rules",
    "rules_names",
    multiple=True,
    type=RuleSetParam(also=("all",)),
    help="Rule set to serve (a name, or a house-rules file), repeatable, or 'all' [default: penta and every rule "
    "set already solved].",
)
@DATA_OPTION
@click.option("--open", "open_browser", is_flag=True, help="Open the page in the browser once it is served.")
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    metavar="NAME",
    callback=_each("pentadice.faces.web.addresses", "host_name"),
    help="Another name the page may be reached by (the Host a browser sends), repeatable; others are refused "
    "[served: localhost, loopback addresses, the --host given and the network address printed]. A host name "
    "or address alone (my.box, 192.168.1.5), any port: a URL is refused.",
)
@click.option(
    "--allow-origin",
    "allow_origins",
    multiple=True,
    metavar="ORIGIN",
    callback=_each("pentadice.faces.web.cors", "origin"),
    help="Another site whose pages may call the advice, /api/rules and the offline app's tables "
    "(https://my.app: scheme, host and port), repeatable; every other site's page stays refused [default: none].",
)
@click.option(
    "--prepare/--no-prepare",
    default=True,
    help="Build the tables a game reads that are missing (the chances table, the win player's tables), in the "
    "background from start-up, with progress on /api/health and the page [default: yes]. Tables saved already "
    "are loaded either way.",
)
@DB_OPTION
@click.option(
    "--keep-days",
    type=PositiveNumber(36500, "days", minimum=(1 / 24, "an hour")),  # less: a game removed between two moves
    default=KEEP_DAYS,
    metavar="DAYS",
    show_default=True,
    help="Days an unfinished game is kept without a move before it is removed (finished games are kept): an "
    "hour (0.0417) to 36500.",
)
@click.option(
    "--tls",
    nargs=2,
    type=click.Path(dir_okay=False),
    default=None,
    metavar="CERT KEY",
    help="Serve HTTPS with the certificate CERT and its private key KEY (PEM files: mkcert's, or a self-signed "
    "one; see docs/sharing.md). A phone needs HTTPS to install the page as an app.",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 64),
    default=1,
    show_default=True,
    help="Server processes sharing the port and the games database, each holding its own tables in memory "
    "(about 2.2 GB each for Penta's).",
)
def serve(
    host: str,
    port: int,
    rules_names: tuple[str, ...],
    data: str | None,
    open_browser: bool,
    allow_hosts: tuple[str, ...],
    allow_origins: tuple[str, ...],
    prepare: bool,
    db: str | None,
    keep_days: float,
    tls: tuple[str, str] | None,
    workers: int,
) -> None:
    """Serve the page (play, coach, review) and the JSON API (/openapi.json) over HTTP (HTTPS with --tls),
    until Ctrl-C.

    Every table a game reads is loaded when the server starts, and those missing are built then, in the
    background: no move of a game waits for one. Games are kept in the games database (--db): a server
    started again goes on with them."""
    from pentadice.support import extras

    try:
        extras.require()  # the web server's packages: a broken install is said now, before any table loads
    except extras.MissingPart as e:
        raise exits.Failure(str(e)) from None
    from pentadice.faces.web import addresses
    from pentadice.tables import chunks

    tls = tuple(tls) if tls else None
    if tls is not None:
        check_tls(*tls)  # a bad certificate is said before any table loads
    chunks.use_private_copies()  # the server answers from tables in its own memory: nothing on disk changes them
    names = _served_rules(rules_names, data)
    try:
        sock = addresses.bind(host, port)  # a port in use is said before any table loads
    except addresses.BindError as e:
        raise (click.UsageError if e.usage else exits.Failure)(str(e)) from None
    with sock:
        database = open_games_database(db)  # unreachable, newer than this program: said now; migrated once, here
        served = Served(names, data, host, allow_hosts, prepare, db, keep_days, open_browser, tls, allow_origins)
        if workers == 1:
            served.run(sock, database)
            return
        database.close()  # each worker opens its own connections (none are shared across fork)
        from pentadice.faces.web.preparing import SharedStatus
        from pentadice.faces.web.workers import run_workers

        sock.listen(2048)  # connections wait in the queue while the workers load their tables
        shared = SharedStatus(workers)
        served.announce(sock, f" with {workers} workers")
        if run_workers(workers, lambda index, again: served.run(sock, None, shared, index, again)) != 0:
            raise exits.Failure("the server's workers kept ending: see the messages above")


class Served:
    """What ``serve`` serves and how, run in this process or in each worker (:meth:`run`)."""

    def __init__(
        self, names, data, host, allow_hosts, prepare, db, keep_days, open_browser, tls=None, allow_origins=()
    ) -> None:
        self.names, self.data, self.host, self.allow_hosts = names, data, host, allow_hosts
        self.prepare, self.db, self.keep_days, self.open_browser = prepare, db, keep_days, open_browser
        self.tls = tls  # (certificate, private key): HTTPS; None: HTTP
        self.allow_origins = allow_origins  # other sites whose pages may call the shared routes
        self.scheme = "https" if tls else "http"

    def run(self, sock, database, shared=None, worker: int = 0, again: bool = False) -> None:
        """Load the tables, then serve on ``sock`` until a signal stops it (``shared``: one of several workers)."""
        from pentadice.faces.web import addresses, server

        advisors = {name: loading.load_advisor(name, self.data) for name in self.names}
        for advisor in advisors.values():
            loading.load_spread(advisor)  # the second moments too: checked and held now, never read from disk mid-game
        from pentadice.faces.web.advising import needs_compiling, warm_up
        from pentadice.faces.web.api import create_app
        from pentadice.faces.web.preparing import Preparation

        if worker == 0 and not again and needs_compiling():  # a first start: say why the page is not served yet
            click.echo("Compiling the advisor (first start only)...", err=True)
        warm_up(advisors.values())
        if database is None:
            database = open_games_database(self.db)
        preparation = Preparation(
            advisors, lambda name: advisors[name].table.files.directory, build=self.prepare, shared=shared,
            worker=worker,
        )  # fmt: skip
        port = sock.getsockname()[1]
        app = create_app(
            advisors,
            allowed_hosts=addresses.allowed_hosts(self.host, self.allow_hosts),
            preparation=preparation,
            db=database,
            keep_days=self.keep_days,
            share_base=addresses.share_base(self.host, port, self.scheme),
            stopping=lambda: sock.fileno() < 0,  # uvicorn closes the listening socket first when it stops
            allowed_origins=self.allow_origins,
        )
        preparation.start()
        if shared is None:
            sock.listen(2048)
            self.announce(sock)
        url = addresses.url_of(self.host, port, self.scheme)

        def opened() -> None:
            import webbrowser

            webbrowser.open(url)

        try:
            first = worker == 0 and not again  # the browser opened once, not at each start of a worker
            tls = {"tls": self.tls} if self.tls else {}  # server.run's own option (pentadice/faces/web/server.py)
            server.run(app, sock, on_started=opened if self.open_browser and first else None, **tls)
        except KeyboardInterrupt:
            if shared is not None:
                raise
            raise exits.Interrupted(f"the server stopped; its games are kept in {database.where}") from None
        finally:
            database.close()

    def announce(self, sock, workers: str = "") -> None:
        """Where the page is served, once."""
        from pentadice.faces.web import addresses

        url = addresses.url_of(self.host, sock.getsockname()[1], self.scheme)
        click.echo(f"Serving {', '.join(self.names)} at {url}{workers} (API: {url}openapi.json). Ctrl-C stops it.")
        if not addresses.is_local(self.host):
            there = addresses.url_of(addresses.network_address(self.host), sock.getsockname()[1], self.scheme)
            click.echo(
                f"The page is reachable from the network: on a phone on the same Wi-Fi, open {there} "
                "(anyone on the network can use it)."
            )
        sys.stdout.flush()


def _served_rules(given: tuple[str, ...], data: str | None) -> list[str]:
    """The rule sets to serve: those given ('all': every one), else penta and every one already solved."""
    if "all" in given:
        return list(rules.REGISTRY)
    if given:
        return list(dict.fromkeys(given))
    from pentadice.tables.inventory import inventory

    held = inventory(paths.data_dir(data))
    for name, state in held.items():  # a table there that cannot be used is left out, and said so
        if name != rules.DEFAULT_RULES and state.startswith("unusable"):
            click.echo(f"Not serving {name}: {state.removeprefix('unusable: ')}", err=True)
    return [n for n in rules.REGISTRY if n == rules.DEFAULT_RULES or held.get(n, "").startswith("solved")]
