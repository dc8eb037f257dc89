// Package store is the results store of a sweep: one SQLite file
// (modernc.org/sqlite, pure Go, so metalab builds with CGO_ENABLED=0) that
// holds one plan and every result the sweep produced under it, written as
// each result arrives, so that an interrupted sweep resumes without
// redoing work and `metalab results` can query a sweep while it runs.
//
// # What it holds
//
// A store is made for one Plan: the plan's JSON (strategy, rule, cases,
// pairs, ...), identified by its hash, and the sha256 of the baseline
// source. Every result is keyed by the plan hash, the baseline sha256, the
// variant's sha256 (whose name and site refs are recorded once with
// PutVariant), the backend, the device and the case (Key):
//
//   - compiles: status, message, compiler log, static threadgroup bytes;
//   - checks, per case: status (check.Status), message, findings count;
//   - measurements of paired alternating A/B timing (A the baseline, B the
//     variant), each with its raw samples (pair index, side, order in the
//     pair, duration in ns, clock) and, once complete, its summary (medians,
//     median pair ratio and its interval, spread, contamination flags);
//     a control is a measurement of the baseline against itself (Key.Variant
//     is Store.Baseline()), and the SQL view controls lists them;
//   - decisions: the rule's verdict and its reasons.
//
// The schema is versioned: schema_migrations records each step applied, and
// Open migrates an older store forward. A store is marked with its own
// SQLite application id; Open and OpenExisting refuse any other database
// (ErrNotStore) and leave it untouched.
//
// # Durability
//
// Each result is written in its own transaction (a pair of samples is one
// result) and is on disk when the Put call returns. The store runs in WAL
// mode, so readers never block the writer and a crash never leaves a
// half-written transaction visible, with synchronous=FULL: every commit
// syncs the write-ahead log before it returns. With synchronous=NORMAL a
// commit would survive the process being killed (kill -9: the written
// pages are in the OS) but not a power loss or kernel crash, which could
// roll back the commits since the last checkpoint; a sweep runs for hours
// and its results are expensive, so every committed result must survive
// both. The price is one sync per result, which is small next to the kernel
// runs that produce results, and is never paid inside a timed region: the
// sweep writes a pair after timing it. fullfsync and checkpoint_fullfsync
// are on as well: on macOS, where Metal timings are taken, plain fsync does
// not flush the drive's cache; elsewhere they change nothing. The test
// suite kills a writing child process with SIGKILL mid-stream and requires
// every committed row intact and the file passing SQLite's integrity check;
// power loss cannot be tested here and rests on SQLite's guarantees.
//
// # Resume
//
// Open(path, plan) creates the store or reopens it for the same plan. It
// refuses a store made for another baseline (ErrOtherBaseline) or another
// plan (ErrOtherPlan), naming both hashes, so results of different plans
// are never mixed; and it takes a writer's lock (ErrInUse), released when
// the process ends however it ends, so two sweeps never write one store.
//
// A resumed sweep asks before each step and skips what is recorded:
// Compile, HasCheck (or Check), Measurements, Decision. Results are
// append-only: recording a key twice is ErrExists. A measurement
// interrupted midway (some pairs written, no summary) is not continued:
// the next Begin of the same key deletes it with its samples and the
// measurement is redone from scratch, so that all pairs of a measurement
// come from one uninterrupted run under the same conditions.
//
// # Merge
//
// Merge combines stores of one plan (shards of one sweep run on several
// machines or processes) into one, refusing mixed plans or baselines. It is
// idempotent; results that disagree (a check that passed in one shard and
// failed in another) are a *ConflictError and nothing is merged.
// Measurements carry random ids, so two shards' controls of the same case
// are both kept.
//
// # Queries
//
// Results(ctx, Query) returns rows of any stage, filtered by variant (sha256,
// prefix or name), case, phase, backend, device and status; a Row encodes
// as JSON with stable field names. OpenExisting opens a store read-only,
// whatever its plan, for queries and as a source of Merge.
package store
