#!/usr/bin/env python3
"""Writes the seed corpus of every fuzz target into fuzz/corpus/<target>/.

Seeds are a few valid inputs (so the fuzzer starts past the first checks) and one of each kind of
invalid input the decoder must reject. Byte layouts follow docs/wire_format.md and the input
layout each fuzz/<target>_fuzz.cc describes. Re-run after changing a layout; file names are
stable so the diff shows what changed.
"""
import os
import shutil
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
JOB_TOKEN = 0x12345678
JOB_SIZE = 4


def header(version=1, type_=1, flags=0, source=1, context=0, epoch=0, tag=7, length=0,
           token=JOB_TOKEN):
    return struct.pack("<BBHIIIiQI", version, type_, flags, source, context, epoch, tag, length,
                       token)


def wire_header():
    prefix = struct.pack("<II", JOB_TOKEN, JOB_SIZE)
    eager = b"hello"
    descriptor = struct.pack("<QQQQII", 0x7F0000001000, 1 << 20, 42, 1, 0x1234, 0)
    done = struct.pack("<QQ", 42, 1)
    return {
        "eager_valid": prefix + header(length=len(eager)) + eager,
        "eager_empty_valid": prefix + header(),
        "rendezvous_request_valid": prefix + header(type_=2, context=3, epoch=2,
                                                    length=40) + descriptor,
        "rendezvous_done_valid": prefix + header(type_=3, flags=1, tag=0, length=16) + done,
        "control_valid": prefix + header(type_=4, source=3, tag=0),
        "too_short": prefix + header()[:20],
        "bad_version": prefix + header(version=2),
        "unknown_type": prefix + header(type_=9),
        "length_mismatch": prefix + header(length=4) + b"abc",
        "huge_length": prefix + header(length=2**64 - 1),
        "foreign_job": prefix + header(token=0xDEADBEEF),
        "bad_source": prefix + header(source=JOB_SIZE),
        "bad_tag": prefix + header(tag=-1),
    }


def rendezvous():
    return {
        "descriptor_valid": struct.pack("<QQQQII", 0x7F0000001000, 1 << 20, 42, 1, 0x1234, 0),
        "descriptor_reserved_nonzero": struct.pack("<QQQQII", 2**64 - 1, 2**64 - 1, 2**64 - 1,
                                                   2**64 - 1, 0x71, 0x71),
        "done_valid": struct.pack("<QQ", 42, 1),
        "empty": b"",
        "short_descriptor": bytes(39),
        "long_descriptor": bytes(41),
    }


def broadcast_message(kind=1, reserved=b"\0\0\0", context=0, epoch=0, origin=0, subject=1):
    return struct.pack("<B3sIIIQ", kind, reserved, context, epoch, origin, subject)


def broadcast():
    failure = broadcast_message()
    revoke = broadcast_message(kind=2, context=1, epoch=1, origin=2, subject=0)
    # Records: op byte (op % 4: 0 message from a peer, 1 failure, 2 epoch, 3 broadcast), then
    # the 24 message bytes.
    script = bytes([8, 0]) + b"".join(
        bytes([op]) + m for op, m in [(0, failure), (1 | (3 << 2), failure), (3, revoke),
                                      (2, broadcast_message(context=1, epoch=2)), (0, revoke)])
    return {
        "failure_valid": failure,
        "revoke_valid": revoke,
        "aborted_valid": broadcast_message(kind=3, subject=2),
        "aborted_subject_not_rank": broadcast_message(kind=3, subject=2**32),
        "unknown_kind": broadcast_message(kind=4),
        "reserved_nonzero": broadcast_message(reserved=b"\0\1\0"),
        "origin_invalid": broadcast_message(origin=0xFFFFFFFF),
        "failure_subject_not_rank": broadcast_message(subject=2**32),
        "short": failure[:23],
        "script_n8": script,
    }


def heartbeat():
    # FuzzedDataProvider input: any bytes are meaningful; a few shapes of different lengths.
    return {
        "zeros": bytes(64),
        "ones": b"\xff" * 64,
        "counting": bytes(range(128)),
        "alternating": b"\x00\x01\x02\x03" * 40,
    }


def text_seeds(values):
    return {"seed_%02d" % i: v.encode() for i, v in enumerate(values)}


def config():
    return text_seeds([
        "1", "yes", " Off ", "TRUE", "maybe", "-42", "+7", "9223372036854775807",
        "-9223372036854775808", "9223372036854775808", "8192", "8k", "8KiB", " 2 gb", "1t",
        "16777216t", "1.5k", "250us", "1.5s", "2m", "1h", "500", "10 min", "0.0000001ns",
        "1.2.3s", ".5s", "3ms ", "", "12x",
    ])


def log_level():
    return text_seeds(["error", "warn", "INFO", "Debug", "trace", "tracex", "", "warn\0"])


def rank_set():
    return text_seeds([
        "{0-3,7,9-12}", "{}", "1,2,3", " { 3 - 5 , 4 } ", "5-1", "4294967294", "4294967295",
        "0-4294967294", "{1", "1,,2", "-", "1-2-3", "0-9\0" + "{5-20,30}", "7\0" + "{}",
    ])


def rftrun_options():
    def argv(*args):
        return "\0".join(args)

    return text_seeds([
        argv("-n", "4", "--ft", "--timeout", "10", "--kill", "2@0.5", "--stop", "3@1.5", "--",
             "./a.out", "arg"),
        argv("-np", "4096", "--no-tag-output", "-v", "prog"),
        argv("-h"),
        argv("-n", "0", "prog"),
        argv("-n", "2", "--kill", "2@1", "prog"),
        argv("-n", "2", "--kill", "1@", "prog"),
        argv("-n", "2", "--timeout", "nan", "prog"),
        argv("-n", "2", "--timeout", "1e-10", "prog"),
        argv("-n", "2"),
        argv("--bogus"),
        argv("-n"),
        # Across nodes: a fault's rank is checked once the nodes have joined, not here.
        argv("-n", "2", "--ft", "--nodes", "2", "--listen", "127.0.0.1:0", "--kill", "5@1",
             "--node-name", "a", "prog"),
        argv("-n", "2", "--join", "[::1]:7000", "--plain-pmix", "prog"),
        argv("-n", "2", "--nodes", "2", "--join", "127.0.0.1:7000", "prog"),
        argv("-n", "2", "--listen", "127.0.0.1:7000", "--join", "127.0.0.1:7000", "prog"),
        argv("-n", "2", "--timeout", "5", "--get-stack-traces", "prog"),
    ])


def rank_set_bytes(intervals):
    return struct.pack("<I", len(intervals)) + b"".join(struct.pack("<II", a, b) for a, b in intervals)


def era_message():
    """members byte, self byte, then an agreement message (agreement/era_message.h)."""
    def value(flag=0xFFFFFFFF, maximum=0, floor=0, words=(), acked=()):
        return (struct.pack("<IIQI", flag, maximum, floor, len(words)) +
                b"".join(struct.pack("<Q", w) for w in words) + rank_set_bytes(acked))

    def message(kind, seq=0, failed=(), body=b""):
        return struct.pack("<BQ", kind, seq) + rank_set_bytes(failed) + body

    return {
        "up_valid": bytes([4, 0]) + message(1, body=value()),
        "up_failed_valid": bytes([8, 0]) + message(1, failed=[(3, 5)], body=value(acked=[(3, 4)])),
        "decided_valid": bytes([4, 1]) + message(2, seq=1, failed=[(2, 3)],
                                                 body=value(flag=6, maximum=3, words=[0xF0])),
        "view_valid": bytes([4, 2]) + message(3, failed=[(0, 1)]),
        "unknown_kind": bytes([4, 0]) + message(9),
        "interval_beyond_members": bytes([4, 0]) + message(3, failed=[(2, 9)]),
        "intervals_out_of_order": bytes([8, 0]) + message(3, failed=[(4, 5), (1, 2)]),
        "trailing_bytes": bytes([4, 0]) + message(3) + b"x",
        "too_many_words": bytes([4, 0]) + message(1, body=struct.pack("<IIQI", 0, 0, 0, 99999)),
        "truncated": bytes([4, 0]) + message(1, body=value())[:-3],
    }


def merge_record():
    # First byte even: a merge record; odd: a job-rank space (RFT_JOIN's blocks).
    def record(members, pair=2, epoch=3, failed=(), parents=0):
        body = struct.pack("<IIIII", len(members), pair, epoch, parents, len(failed))
        body += b"".join(struct.pack("<I", m) for m in members)
        body += b"".join(struct.pack("<II", a, b) for a, b in failed)
        return bytes([0]) + body
    return {
        "record_valid": record([0, 1, 4, 3], failed=[(2, 3)]),
        "record_spawn_valid": record([0, 1, 4, 5], parents=2),
        "record_no_child": record([0, 1], parents=2),
        "record_no_members": record([]),
        "record_member_not_a_rank": record([0, 0xFFFFFFFF]),
        "record_interval_reversed": record([0, 1], failed=[(3, 1)]),
        "record_intervals_out_of_order": record([0, 1], failed=[(5, 6), (1, 2)]),
        "record_truncated": record([0, 1], failed=[(2, 3)])[:-2],
        "space_valid": b"\x01" + b"4:rftrun.42;1:rftrun.42.s1;2:rftrun.42.s2",
        "space_empty_namespace": b"\x01" + b"4:",
        "space_not_a_count": b"\x01" + b"x:job",
        "space_trailing_separator": b"\x01" + b"4:job;",
        "space_duplicate": b"\x01" + b"4:job;4:job",
        "space_too_large": b"\x01" + b"4294967295:job;2:other",
    }


def peer_record():
    def record(pid=4242, descriptor=b"\1\2\3", segment=b"", socket=b"", qps=b"",
               address=b"\x09\x08\x07", lengths=None):
        sizes = lengths or (len(descriptor), len(segment), len(socket), len(qps))
        return struct.pack("<IIIII", pid, *sizes) + descriptor + segment + socket + qps + address
    qps = struct.pack("<IQI", 2, 0x7F0000002000, 0x55) + bytes(2 * 48)
    return {
        "valid_minimal": record(),
        "valid_with_segment_and_socket": record(segment=b"/rft-0000abcd-3",
                                                socket=b"rft.control.42.3"),
        "valid_with_verbs_qps": record(qps=qps),
        "no_address": record(address=b""),
        "short": record()[:11],
        "huge_lengths": record(lengths=(2**32 - 1, 2**32 - 1, 2**32 - 1, 2**32 - 1)),
        "segment_name_too_long": record(segment=b"s" * 256),
        "verbs_qps_overrun": record(qps=qps, lengths=(3, 0, 0, len(qps) + 3)),
    }


def dataplane_record():
    def record(flags=1, verbs=b"", address=b"\x09\x08\x07"):
        return struct.pack("<IIIiIi", 4242, flags, 4000, 17, 1 << 20, 18) + verbs + address
    verbs = struct.pack("<II", 64, 8192)
    return {
        "valid_rendezvous": record(),
        "valid_verbs": record(flags=8 | 4, verbs=verbs),
        "verbs_flag_without_part": record(flags=8, verbs=b"", address=b"\x01"),
        "no_address": record(address=b""),
        "unknown_flag": record(flags=16),
        "short": record()[:23],
    }


def qp_table():
    def table(entries=3, hole=1, version=3, count=None):
        header = struct.pack("<BIHB", version, entries if count is None else count, 0x1234, 3)
        header += bytes(range(0xf0, 0x100)) + struct.pack("<QIII", 0x7f0011223344, 0xdeadbeef,
                                                          16, 8192)
        body = b""
        for i in range(entries):
            body += b"\0" * 6 if i == hole else (0xabcdef - i).to_bytes(3, "little") + \
                (0x123456 + i).to_bytes(3, "little")
        return header + body

    def seed(entries, index, data):
        return struct.pack("<II", entries, index) + data

    return {
        "valid": seed(3, 0, table()),
        "hole": seed(3, 1, table()),
        "past_the_end": seed(3, 3, table()),
        "other_count": seed(4, 0, table()),
        "other_version": seed(3, 0, table(version=2)),
        "truncated": seed(3, 0, table()[:21]),
        "one": seed(1, 0, table(entries=1, hole=5)),
    }


def main():
    for target, seeds in [("wire_header", wire_header()), ("rendezvous", rendezvous()),
                          ("broadcast", broadcast()), ("heartbeat", heartbeat()),
                          ("config", config()), ("log_level", log_level()),
                          ("rank_set", rank_set()), ("rftrun_options", rftrun_options()),
                          ("era_message", era_message()), ("merge_record", merge_record()),
                          ("peer_record", peer_record()), ("qp_table", qp_table()),
                          ("dataplane_record", dataplane_record())]:
        directory = os.path.join(HERE, target)
        shutil.rmtree(directory, ignore_errors=True)
        os.makedirs(directory)
        for name, data in seeds.items():
            with open(os.path.join(directory, name), "wb") as f:
                f.write(data)


if __name__ == "__main__":
    main()
