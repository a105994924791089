"""The Python peers of the side-by-side benchmark (run.py): pydantic 2 and DBOS.

    python peers.py contract|unions|ledger EXPORT_FILE BUDGET_MS

prints one JSON line {"impl", "tool", "payload", "ns_median", "accepted"} per way and payload,
timed as peers_rust does: the median, over batches, of the time per call within a batch.
EXPORT_FILE is what `peers_rust export` wrote (the payloads; the schemas are written here by
hand to match them).
"""
import json
import os
import shutil
import sqlite3
import sys
import tempfile
import time
from typing import Annotated, Dict, List, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError


class Closed(BaseModel):
    # `additionalProperties: false` and no coercion, as the exported schemas ask.
    model_config = ConfigDict(extra="forbid", strict=True)


Currency = Literal["USD", "EUR", "GBP"]


class Invoice(Closed):
    customerId: Annotated[str, Field(min_length=1)]
    amount: Annotated[float, Field(gt=0)]
    currency: Currency


class Passenger(Closed):
    age: Annotated[int, Field(ge=0, le=120)]
    needsSeat: bool = True
    checkedBags: Annotated[int, Field(ge=0, le=4)] = 0


class Price(Closed):
    amount: Annotated[float, Field(gt=0, le=1000000)]
    currency: Currency


class TimeWindow(Closed):
    earliest_hour: Annotated[int, Field(ge=0, le=23)]
    latest_hour: Annotated[int, Field(ge=0, le=23)]


Iata = Annotated[str, Field(pattern=r"^[A-Z]{3}$")]
Day = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$")]


class Flights(Closed):
    origin: Iata
    destination: Iata
    departureDate: Day
    returnDate: Optional[Day] = None
    passengers: Annotated[List[Passenger], Field(min_length=1, max_length=9)]
    cabin: Literal["economy", "premium_economy", "business", "first"]
    maxStops: Optional[Annotated[int, Field(ge=0, le=3)]] = None
    maxPrice: Optional[Price] = None
    preferredAirlines: Annotated[List[str], Field(max_length=5)] = []
    refundableOnly: bool = False
    departureWindow: Optional[TimeWindow] = None
    limit: Annotated[int, Field(ge=1, le=50)]
    tags: Dict[str, str] = {}


U32 = Annotated[int, Field(ge=0, le=4294967295)]


class Insert(Closed):
    type: Literal["Insert"]
    line: U32
    text: str


class Delete(Closed):
    type: Literal["Delete"]
    line: U32
    count: Optional[U32] = None


class Replace(Closed):
    type: Literal["Replace"]
    line: U32
    text: str


class Clear(Closed):
    type: Literal["Clear"]


class EditFile(Closed):
    path: str
    ops: List[Annotated[Union[Insert, Delete, Replace, Clear], Field(discriminator="type")]]


MODELS = {"invoice": Invoice, "flights": Flights, "edit_file": EditFile}


def median_ns(way, budget_s, batch_s):
    """The median time per call of `way`, as peers_rust measures it."""
    clock = time.perf_counter_ns
    start = clock()
    calls = 0
    while clock() - start < budget_s * 1e8 or calls < 3:
        way()
        calls += 1
    per_call = (clock() - start) / calls
    batch = max(1, int(batch_s * 1e9 / per_call))
    samples = []
    started = clock()
    while len(samples) < 7 or (clock() - started < budget_s * 1e9 and len(samples) < 200):
        t = clock()
        for _ in range(batch):
            way()
        samples.append((clock() - t) / batch)
    samples.sort()
    return samples[len(samples) // 2]


def line(way, tool, payload, ns, accepted):
    print(json.dumps({"impl": way, "tool": tool, "payload": payload, "ns_median": ns,
                      "accepted": accepted}), flush=True)


def pydantic_way(model, text):
    def run():
        try:
            model.model_validate_json(text, strict=True)
            return True
        except ValidationError as error:
            # Every violation with its message, as the other ways report them.
            error.errors()
            return False
    return run


def validation(group, payloads, budget_s):
    for entry in payloads:
        tool = entry["tool"]
        if (tool == "edit_file") != (group == "unions"):
            continue
        run = pydantic_way(MODELS[tool], entry["text"])
        accepted = run()
        line("pydantic", tool, entry["payload"], median_ns(run, budget_s, 0.002), accepted)


INVOICE_VALID = '{"customerId":"cus_42","amount":120.5,"currency":"USD"}'


def plain_sqlite(path):
    """The hand-written claim-and-settle of benches/plain_sqlite.rs, in Python's sqlite3."""
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA synchronous = NORMAL")
    connection.execute(
        "CREATE TABLE IF NOT EXISTS claims (scope TEXT NOT NULL, id TEXT NOT NULL, "
        "tool TEXT NOT NULL, arguments TEXT NOT NULL, claimed_at INTEGER NOT NULL, "
        "status TEXT, body TEXT, settled_at INTEGER, PRIMARY KEY (scope, id)) WITHOUT ROWID")
    counter = iter(range(1, 1 << 62))

    def run():
        call_id = f"call_{next(counter)}"
        now = int(time.time() * 1000)
        connection.execute("BEGIN IMMEDIATE")
        inserted = connection.execute(
            "INSERT INTO claims (scope, id, tool, arguments, claimed_at) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            ("peers", call_id, "create_invoice", INVOICE_VALID, now)).rowcount
        connection.execute("COMMIT")
        if inserted == 0:
            return False
        connection.execute("BEGIN IMMEDIATE")
        connection.execute(
            "UPDATE claims SET status = 'ok', body = ?, settled_at = ? WHERE scope = ? AND id = ?",
            ('{"ok":true}', now, "peers", call_id))
        connection.execute("COMMIT")
        return True
    return run


def dbos_way(path):
    """One DBOS workflow per call, with a new workflow id, running one step: DBOS records the
    workflow, checkpoints the step's output and records the workflow's result, in its SQLite
    system database (WAL, synchronous = NORMAL, as SqliteLedger)."""
    import sqlalchemy
    from dbos import DBOS, SetWorkflowID

    with sqlite3.connect(path) as connection:
        mode = connection.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        assert mode == "wal", mode

    @sqlalchemy.event.listens_for(sqlalchemy.engine.Engine, "connect")
    def normal_sync(dbapi_connection, _record):
        dbapi_connection.execute("PRAGMA synchronous = NORMAL")

    DBOS(config={"name": "peers", "system_database_url": f"sqlite:///{path}",
                 "log_level": "WARNING"})

    @DBOS.step()
    def settle(arguments):
        return {"ok": len(arguments) > 0}

    @DBOS.workflow()
    def call(arguments):
        return settle(arguments)

    DBOS.launch()
    counter = iter(range(1, 1 << 62))

    def run():
        with SetWorkflowID(f"call_{next(counter)}"):
            return call(INVOICE_VALID)["ok"]
    return run, DBOS


def cpu_ns(run, calls):
    """The processor time per call, user and system, of every thread of this process, which
    the waits of a loaded machine do not inflate as they inflate the elapsed time."""
    before = time.process_time_ns()
    for _ in range(calls):
        run()
    return (time.process_time_ns() - before) / calls


def ledger(budget_s):
    folder = tempfile.mkdtemp(prefix="peers-ledger-")
    try:
        run = plain_sqlite(os.path.join(folder, "plain.db"))
        accepted = run()
        ns = median_ns(run, budget_s, 0.02)
        print(json.dumps({"impl": "python_plain_sqlite", "tool": "invoice", "payload": "valid",
                          "ns_median": ns, "accepted": accepted,
                          "cpu_ns": cpu_ns(run, 2000)}), flush=True)
        run, dbos = dbos_way(os.path.join(folder, "dbos.sqlite"))
        accepted = run()
        ns = median_ns(run, budget_s, 0.02)
        print(json.dumps({"impl": "dbos", "tool": "invoice", "payload": "valid",
                          "ns_median": ns, "accepted": accepted,
                          "cpu_ns": cpu_ns(run, 200)}), flush=True)
        dbos.destroy()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main():
    group, export, budget_ms = sys.argv[1], sys.argv[2], int(sys.argv[3])
    budget_s = budget_ms / 1000
    if group == "ledger":
        ledger(budget_s)
        return
    with open(export) as file:
        payloads = json.load(file)["payloads"]
    validation(group, payloads, budget_s)


if __name__ == "__main__":
    main()
