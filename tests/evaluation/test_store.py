"""The run store: create/resume, idempotent records, and clear errors (never overwrites) for
corrupt or foreign files at the run path."""

import sqlite3
import subprocess
import sys
from dataclasses import asdict

import pytest

from arena.errors import ArenaError
from arena.evaluation.store import DB_NAME, MatchRecord, RunStore, match_id


def _rec(mid, seq=0):
    return MatchRecord(
        id=mid,
        pairing="a|b",
        seed=0,
        game_index=seq,
        game="kuhn_poker",
        seats=["a", "b"],
        returns=[1.0, -1.0],
        plan_seq=seq,
        forfeit_player=1,
        forfeit_agent="b",
        forfeit_reason="illegal action 7",
        length=3,
        duration=0.01,
        info={"x": 1},
    )


def test_create_record_resume(tmp_path):
    run = tmp_path / "run"
    ids = [match_id("fp", "a|b", 0, k) for k in range(3)]
    assert len(set(ids)) == 3 and ids[0] == match_id("fp", "a|b", 0, 0) != match_id("fp", "a|b", 1, 0)
    with RunStore.open(run, "fp", "game: x\n") as s:
        assert s.record_match(_rec(ids[1], 1))
        assert s.record_match(_rec(ids[0], 0), transcript=["player 0: bet", "result"])
        assert not s.record_match(_rec(ids[0], 0))  # idempotent
        s.record_snapshot(2, "bt", {"a": (1010.0, None, None, 2), "b": (990.0, None, None, 2)})
    with RunStore.open(run, "fp") as s:  # resume
        recs = s.matches()
        assert [r.id for r in recs] == [ids[0], ids[1]]  # plan order, not arrival order
        assert recs[0].forfeit_reason == "illegal action 7" and recs[0].info == {"x": 1}
        assert (run / recs[0].transcript).read_text().startswith("player 0: bet")
        assert s.count() == 2 and s.snapshots("bt")[2]["a"][0] == 1010.0
    assert (run / "config.yaml").read_text() == "game: x\n"
    with pytest.raises(ArenaError, match="different config"):
        RunStore.open(run, "other")


def test_ids_ordered_within_a_pairing_and_schema_1_stores_read_not_resumed(tmp_path):
    """Ids sort by pairing, then game number (a batch appends to the id index instead of touching
    random pages); a store of the older, whole-hash ids is still read, but never resumed (its
    games would be played again under new ids and counted twice)."""
    ids = [match_id("fp", "a|b", 0, k) for k in (0, 1, 15, 16, 4096)]
    assert ids == sorted(ids) and len({i[:12] for i in ids}) == 1 and all(len(i) == 24 for i in ids)
    assert match_id("fp", "a|c", 0, 0)[:12] != ids[0][:12]
    run = tmp_path / "old"
    with RunStore.open(run, "fp") as s:
        s.record_match(_rec(ids[0], 0))
        s.set_meta("schema", "1")
    with pytest.raises(ArenaError, match="schema 1.*resumes schema 2 only"):
        RunStore.open(run, "fp")
    with RunStore.open_existing(run) as s:
        assert [r.id for r in s.matches()] == [ids[0]]


def test_batched_commit_stores_each_return_vector_as_given(tmp_path):
    """The commit reuses the JSON of repeated seatings and return vectors; what it stores must
    still be each record's own: -0.0 is not 0.0, an int is not a float (equal as dict keys)."""
    vectors = [[1.0, -1.0], [0.0, -0.0], [-0.0, 0.0], [1, -1], [1.0, -1.0], [float("nan"), 2.5], [True, 0]]
    with RunStore.open(tmp_path / "run", "fp") as s:
        with s.batch(100):
            for k, v in enumerate(vectors):
                rec = _rec(match_id("fp", "a|b", 0, k), k)
                rec.returns = list(v)
                assert s.record_match(rec)
        got = [r.returns for r in s.matches()]
    assert [repr(g) for g in got] == [repr(v) for v in vectors]


def test_an_empty_store_file_is_a_new_run(tmp_path):
    """A plain ``sqlite3.connect`` (a reader polling a run that is starting) creates an empty
    file; SQLite reads an empty file as an empty database, and so does the store: the run starts.
    Seen: a test's poll made the file between the writer's lock and its store, and the writer
    refused its own new run as "not an SQLite database"."""
    run = tmp_path / "run"
    run.mkdir()
    sqlite3.connect(run / DB_NAME).close()
    assert (run / DB_NAME).stat().st_size == 0
    with RunStore.open(run, "fp", lock=True) as s:
        assert s.meta()["fingerprint"] == "fp"
    with RunStore.open(run, "fp") as s:  # and it resumes as a run
        assert s.meta()["fingerprint"] == "fp"


@pytest.mark.parametrize("content", [b"not a database at all" * 20, b"SQLite format 3\x00" + b"\x07" * 600])
def test_corrupt_store_is_an_error_and_untouched(tmp_path, content):
    run = tmp_path / "run"
    run.mkdir()
    (run / DB_NAME).write_bytes(content)
    with pytest.raises(ArenaError, match="not an arena run store"):
        RunStore.open(run, "fp")
    assert (run / DB_NAME).read_bytes() == content
    assert sorted(p.name for p in run.iterdir()) == [DB_NAME]


def test_foreign_sqlite_file_path_and_nonempty_dir(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    con = sqlite3.connect(run / DB_NAME)
    con.execute("CREATE TABLE meta (key TEXT, value TEXT)")
    con.execute("INSERT INTO meta VALUES ('kind', 'something-else')")
    con.commit()
    con.close()
    before = (run / DB_NAME).read_bytes()
    with pytest.raises(ArenaError, match="not an arena run store"):
        RunStore.open(run, "fp")
    assert (run / DB_NAME).read_bytes() == before
    f = tmp_path / "file"
    f.write_text("precious")
    with pytest.raises(ArenaError, match="is a file"):
        RunStore.open(f, "fp")
    assert f.read_text() == "precious"
    d = tmp_path / "notes"
    d.mkdir()
    (d / "todo.txt").write_text("keep")
    with pytest.raises(ArenaError, match="non-empty directory"):
        RunStore.open(d, "fp")
    assert [p.name for p in d.iterdir()] == ["todo.txt"]


def test_cli_reports_corrupt_store_in_one_line(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / DB_NAME).write_bytes(b"garbage" * 100)
    for argv in (["tournament", "configs/tournament/kuhn_round_robin.yaml", f"out={run}"], ["leaderboard", str(run)]):
        p = subprocess.run([sys.executable, "-m", "arena.cli", *argv], capture_output=True, text=True)
        assert p.returncode == 2, p.stderr
        assert p.stderr.count("\n") == 1 and "not an arena run store" in p.stderr and "Traceback" not in p.stderr
    assert (run / DB_NAME).read_bytes() == b"garbage" * 100


def test_atomic_dir_clears_what_a_killed_writer_left(tmp_path):
    """A directory half-written by a process killed mid-write (another pid) is gone once the
    directory is written again: a resumed run leaves no stray temporaries beside its snapshots."""
    from arena.atomic import atomic_dir

    stale = tmp_path / ".ppo@3.tmp99999"
    stale.mkdir()
    (stale / "weights.pt").write_text("half")
    atomic_dir(tmp_path / "ppo@3", lambda d: (d / "weights.pt").write_text("whole"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ppo@3"]
    assert (tmp_path / "ppo@3" / "weights.pt").read_text() == "whole"


def test_plain_games_stored_through_literal_columns_equal_the_records(tmp_path):
    """A batch of plain games (no forfeit, transcript or details) of one game, seed and round is
    inserted with those columns as SQL literals; mixed with other games, other seeds and a game
    name that needs quoting, every stored row must be its record, with the same column types."""
    recs = []
    for k in range(12):
        rec = _rec(match_id("fp", "a|b", 0, k), k)
        rec.forfeit_player = rec.forfeit_agent = rec.forfeit_reason = None
        rec.info = {}
        rec.game = 'it\'s "quoted"; DROP TABLE matches; --'
        recs.append(rec)
    recs[3].info = {"winner": 1}  # not plain
    recs[5].forfeit_player, recs[5].forfeit_agent, recs[5].forfeit_reason = 0, "a", "timeout"
    with RunStore.open(tmp_path / "run", "fp") as s:
        with s.batch(100):
            for rec in recs:
                assert s.record_match(rec)
        other_seed = _rec(match_id("fp", "a|b", 2**40, 99), 99)
        other_seed.seed, other_seed.round, other_seed.forfeit_player = 2**40, 7, None
        other_seed.forfeit_agent = other_seed.forfeit_reason = None
        other_seed.info = {}
        with s.batch(100):  # one plain game of another seed and round with a plain game of seed 0: bound
            assert s.record_match(other_seed)
            plain = _rec(match_id("fp", "a|b", 0, 100), 100)
            plain.forfeit_player = plain.forfeit_agent = plain.forfeit_reason = None
            plain.info = {}
            assert s.record_match(plain)
        stored = s.matches()
        types = s.conn.execute(
            "SELECT DISTINCT typeof(seed), typeof(round), typeof(game), typeof(forfeit_player), typeof(transcript), "
            "typeof(info), typeof(duration), typeof(recorded_at) FROM matches WHERE forfeit_player IS NULL"
        ).fetchall()
    assert [asdict(r) for r in stored] == [asdict(r) for r in recs + [other_seed, plain]]
    assert types == [("integer", "integer", "text", "null", "null", "text", "real", "real")]
