"""Text that is not UTF-8 is read as written: the encoding is detected (and recorded in the
manifest), or given with `--encoding`; a wrong or unknown encoding is one clear line."""

import json
from pathlib import Path

from rlm_docs.cli import main
from rlm_docs.corpus import Corpus

CP1252 = "Café … £100\fNaïve résumé – “quoted”\n"


def _manifest_source(store: Path) -> dict:
    return json.loads((store / "manifest.json").read_text(encoding="utf-8"))["sources"][0]


def test_cp1252_text_is_detected_and_ingested_intact(tmp_path, capsys):
    src = tmp_path / "menu.txt"
    src.write_bytes(CP1252.encode("cp1252"))
    assert main(["ingest", str(src), "--out", str(tmp_path / "s")]) == 0
    corpus = Corpus.load(tmp_path / "s")
    assert corpus.pages("menu", 1, 2) == ["Café … £100", "Naïve résumé – “quoted”\n"]
    assert _manifest_source(tmp_path / "s")["encoding"] == "cp1252"
    err = capsys.readouterr().err
    assert "menu.txt: not UTF-8 (first at byte 3); read as cp1252, the encoding detected" in err
    assert "\ufffd" not in err


def test_encoding_flag_reads_and_is_part_of_the_source_identity(tmp_path, capsys):
    src = tmp_path / "menu.md"
    src.write_bytes(CP1252.encode("cp1252"))
    store = tmp_path / "s"
    assert main(["ingest", str(src), "--out", str(store), "--encoding", "cp1252"]) == 0
    assert _manifest_source(store)["encoding"] == "cp1252"
    assert Corpus.load(store).page("menu", 1) == "Café … £100"
    assert "not UTF-8" not in capsys.readouterr().err  # given, so no guess to report
    assert main(["ingest", str(src), "--out", str(store), "--encoding", "latin-1"]) == 0
    assert "read 1, skipped 0 unchanged" in capsys.readouterr().out  # re-read in the new one
    assert _manifest_source(store)["encoding"] == "iso8859-1"
    assert Corpus.load(store).page("menu", 1) == "Café \x85 £100"  # latin-1 has no …


def test_utf16_needs_the_flag_and_then_reads(tmp_path, capsys):
    src = tmp_path / "wide.txt"
    src.write_bytes("page one\fpage two\f".encode("utf-16"))
    assert main(["ingest", str(src), "--out", str(tmp_path / "s")]) == 2
    assert "pass --encoding utf-16" in capsys.readouterr().err
    assert main(["ingest", str(src), "--out", str(tmp_path / "s"), "--encoding", "utf-16"]) == 0
    assert Corpus.load(tmp_path / "s").pages("wide", 1, 2) == ["page one", "page two"]


def test_utf8_is_recorded_and_bad_encodings_are_one_line(tmp_path, capsys):
    plain = tmp_path / "plain.md"
    plain.write_text("Café\fpage two\n", encoding="utf-8")
    assert main(["ingest", str(plain), "--out", str(tmp_path / "u")]) == 0
    assert _manifest_source(tmp_path / "u")["encoding"] == "utf-8"
    capsys.readouterr()
    assert main(["ingest", str(plain), "--out", str(tmp_path / "x"), "--encoding", "nope"]) == 2
    assert capsys.readouterr().err.strip() == (
        "rlm-docs ingest: error: unknown --encoding 'nope' (e.g. utf-8, cp1252, latin-1)"
    )
    cp = tmp_path / "menu.txt"
    cp.write_bytes(CP1252.encode("cp1252"))
    assert main(["ingest", str(cp), "--out", str(tmp_path / "x"), "--encoding", "utf-8"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"rlm-docs ingest: error: {cp}: not valid utf-8 at byte 3 (invalid continuation byte); "
        "not ingested"
    )
    assert not (tmp_path / "x").exists()
