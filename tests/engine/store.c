/* The results store: schema and versions, runs, recording evaluations, a writer killed with
 * SIGKILL mid-run (nothing committed is lost, the file stays sound, a resumed writer goes on),
 * and recordings imported and exported unchanged. SQLite is used here directly only to
 * inspect the file from outside. */
#include "store.h"

#include "tforge/error.h"
#include "tforge/plugin/profile.h"

#include <sqlite3.h>

#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#define KTCACHE(name) TFORGE_TEST_DATA "/ktcache/" name

#include "support/tmpdir.h"

/* A fresh database path for each test. */
static const char *fresh(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    unlink(path);
    return path;
}

static tforge_store *open_ok(const char *path)
{
    tforge_store *store = NULL;
    if (tforge_store_open(&store, path) < 0)
        fail_msg("%s", tforge_error_last()->message);
    return store;
}

static int64_t begin_ok(tforge_store *store, const char *source)
{
    tforge_store_run run = {.source = (char *)source, .strategy = (char *)"random", .seed = 7};
    int64_t id = 0;
    if (tforge_store_begin_run(&id, store, &run) < 0)
        fail_msg("%s", tforge_error_last()->message);
    return id;
}

/* Runs one SQL statement from outside the store and returns its first column as an integer. */
static long long sql_int(const char *path, const char *sql)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    long long value = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return value;
}

static void sql_exec(const char *path, const char *sql)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
}

/* ---- schema ---- */

static void creates_schema_in_wal_mode(void **state)
{
    (void)state;
    const char *path = fresh("schema.db");
    tforge_store_close(open_ok(path));
    assert_int_equal(sql_int(path, "PRAGMA user_version"), 5);
    assert_int_equal(sql_int(path, "SELECT journal_mode = 'wal' FROM pragma_journal_mode"), 1);
    assert_int_equal(sql_int(path, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'"), 7);
    tforge_store_close(open_ok(path)); /* and opens again */
}

static void refuses_newer_and_foreign_files(void **state)
{
    (void)state;
    char expected[1024];
    tforge_store *store = (tforge_store *)&store;

    const char *path = fresh("newer.db");
    tforge_store_close(open_ok(path));
    sql_exec(path, "PRAGMA user_version = 6");
    assert_int_equal(tforge_store_open(&store, path), TFORGE_EINPUT);
    assert_null(store);
    snprintf(expected, sizeof expected,
             "%s: the store's schema is version 6, newer than this tforge knows (5); use a "
             "newer tforge",
             path);
    assert_string_equal(tforge_error_last()->message, expected);

    path = fresh("foreign.db");
    sql_exec(path, "CREATE TABLE t (x)");
    assert_int_equal(tforge_store_open(&store, path), TFORGE_EINPUT);
    snprintf(expected, sizeof expected,
             "%s: a SQLite database but not a tforge store (no schema version)", path);
    assert_string_equal(tforge_error_last()->message, expected);

    path = fresh("text.db");
    FILE *f = fopen(path, "w");
    fputs("this is not a database, but it is long enough to look like a header of one.\n", f);
    fclose(f);
    assert_int_equal(tforge_store_open(&store, path), TFORGE_EINPUT);
    assert_non_null(strstr(tforge_error_last()->message, path));
    assert_non_null(strstr(tforge_error_last()->message, "not a database"));
}

/* ---- runs ---- */

static void begins_and_finds_runs(void **state)
{
    (void)state;
    tforge_store *store = open_ok(fresh("runs.db"));
    tforge_store_run in = {
        .source = (char *)"matmul.json",
        .space_json = (char *)"{\"params\":[]}",
        .strategy = (char *)"gp",
        .settings_json = (char *)"{\"xi\":0.01}",
        .seed = UINT64_MAX, /* bit for bit through SQLite's signed integers */
        .budget = 200,
        .environment_json = (char *)"{\"gpu\":\"H100\",\"driver\":\"550.54\"}",
    };
    int64_t a, b;
    assert_int_equal(tforge_store_begin_run(&a, store, &in), 0);
    in.settings_json = NULL;
    in.seed = 3;
    assert_int_equal(tforge_store_begin_run(&b, store, &in), 0);
    assert_true(b > a);

    tforge_store_run out;
    assert_int_equal(tforge_store_find_run(&out, store, a), 0);
    assert_int_equal(out.id, a);
    assert_string_equal(out.source, "matmul.json");
    assert_string_equal(out.space_json, "{\"params\":[]}");
    assert_string_equal(out.strategy, "gp");
    assert_string_equal(out.settings_json, "{\"xi\":0.01}");
    assert_true(out.seed == UINT64_MAX);
    assert_int_equal(out.budget, 200);
    assert_string_equal(out.environment_json, "{\"gpu\":\"H100\",\"driver\":\"550.54\"}");
    assert_int_equal(strlen(out.created), 24); /* 2025-01-31T12:00:00.000Z */
    assert_int_equal(out.created[10], 'T');
    tforge_store_run_dispose(&out);

    assert_int_equal(tforge_store_find_run(&out, store, b), 0);
    assert_null(out.settings_json);
    assert_true(out.seed == 3);
    tforge_store_run_dispose(&out);

    assert_int_equal(tforge_store_find_run(&out, store, b + 10), TFORGE_ENOTFOUND);
    in.environment_json = (char *)"{not json";
    assert_int_equal(tforge_store_begin_run(&a, store, &in), TFORGE_EINPUT);
    assert_non_null(strstr(tforge_error_last()->message, "begin a run: CHECK constraint failed"));
    tforge_store_close(store);
}

/* ---- measurements ---- */

typedef struct collected {
    int n;
    int stop_after;
    tforge_store_measurement m[8];
    char keys[8][32];
    char metrics[8][64];
} collected;

static int collect(void *context, const tforge_store_measurement *m)
{
    collected *c = context;
    if (c->n == c->stop_after)
        return 42;
    c->m[c->n] = *m;
    snprintf(c->keys[c->n], sizeof c->keys[0], "%s", m->key);
    snprintf(c->metrics[c->n], sizeof c->metrics[0], "%s", m->metrics_json ? m->metrics_json : "");
    c->m[c->n].key = c->m[c->n].params_json = c->m[c->n].metrics_json = c->m[c->n].timestamp =
        NULL;
    c->n++;
    return 0;
}

static void records_in_sequence(void **state)
{
    (void)state;
    const char *path = fresh("record.db");
    tforge_store *store = open_ok(path);
    int64_t run = begin_ok(store, "a"), other = begin_ok(store, "b"), seq;
    tforge_store_measurement m = {
        .key = "16,2",
        .params_json = "{\"BLOCK\":16,\"WARPS\":2}",
        .m.status = TFORGE_STATUS_OK,
        .m.value = 1.5,
        .m.min_ms = 1.25,
        .m.spread = 0.02,
        .m.repeats = 50,
        .m.compile_ms = 800,
        .m.wall_ms = 950,
        .metrics_json = "{\"dram\":0.8}",
    };
    assert_int_equal(tforge_store_record(&seq, store, run, &m), 0);
    assert_int_equal(seq, 1);
    m.m.status = TFORGE_STATUS_COMPILE;
    m.m.value = m.m.min_ms = m.m.spread = NAN;
    m.m.repeats = 0;
    m.metrics_json = NULL;
    m.timestamp = "2025-01-01T00:00:00.000Z";
    assert_int_equal(tforge_store_record(&seq, store, other, &m), 0);
    assert_int_equal(seq, 1); /* each run numbers its own */
    m.key = "32,4";
    m.params_json = "{\"BLOCK\":32,\"WARPS\":4}";
    assert_int_equal(tforge_store_record(&seq, store, run, &m), 0);
    assert_int_equal(seq, 2);
    m.key = "16,2"; /* seen before: the same configuration */
    m.m.status = TFORGE_STATUS_WRONG;
    assert_int_equal(tforge_store_record(NULL, store, run, &m), 0);

    collected c = {.stop_after = -1};
    assert_int_equal(tforge_store_each_measurement(store, run, collect, &c), 0);
    assert_int_equal(c.n, 3);
    for (int i = 0; i < 3; i++)
        assert_int_equal(c.m[i].sequence, i + 1);
    assert_string_equal(c.keys[0], "16,2");
    assert_string_equal(c.keys[1], "32,4");
    assert_int_equal(c.m[0].configuration_id, c.m[2].configuration_id);
    assert_true(c.m[0].configuration_id != c.m[1].configuration_id);
    assert_int_equal(c.m[0].m.status, TFORGE_STATUS_OK);
    assert_true(c.m[0].m.value == 1.5 && c.m[0].m.min_ms == 1.25 && c.m[0].m.spread == 0.02);
    assert_true(c.m[0].m.compile_ms == 800 && c.m[0].m.wall_ms == 950);
    assert_int_equal(c.m[0].m.repeats, 50);
    assert_string_equal(c.metrics[0], "{\"dram\":0.8}");
    assert_int_equal(c.m[1].m.status, TFORGE_STATUS_COMPILE);
    assert_true(isnan(c.m[1].m.value) && isnan(c.m[1].m.min_ms) && isnan(c.m[1].m.spread));
    assert_string_equal(c.metrics[1], "");
    assert_int_equal(c.m[2].m.status, TFORGE_STATUS_WRONG);

    collected stopped = {.stop_after = 1};
    assert_int_equal(tforge_store_each_measurement(store, run, collect, &stopped), 42);
    assert_int_equal(stopped.n, 1);

    int64_t n;
    assert_int_equal(tforge_store_count(&n, store, run), 0);
    assert_int_equal(n, 3);
    assert_int_equal(tforge_store_count(&n, store, other), 0);
    assert_int_equal(n, 1);
    tforge_store_close(store);
    assert_int_equal(sql_int(path, "SELECT COUNT(*) FROM configurations"), 3);
    assert_int_equal(sql_int(path, "SELECT COUNT(*) FROM measurements WHERE timestamp "
                                   "LIKE '____-__-__T__:__:__.___Z'"),
                     4);
}

static void refused_records_leave_nothing(void **state)
{
    (void)state;
    const char *path = fresh("refused.db");
    tforge_store *store = open_ok(path);
    int64_t run = begin_ok(store, "a"), n;
    tforge_store_measurement m = {.key = "1", .params_json = "{\"x\":1}", .m.value = 1,
                                  .metrics_json = "{broken"};
    assert_int_equal(tforge_store_record(NULL, store, run, &m), TFORGE_EINPUT);
    assert_non_null(strstr(tforge_error_last()->message, "CHECK constraint failed"));
    /* The configuration inserted before the failing measurement was rolled back too. */
    assert_int_equal(sql_int(path, "SELECT COUNT(*) FROM configurations"), 0);

    m.metrics_json = NULL;
    assert_int_equal(tforge_store_record(NULL, store, run + 5, &m), TFORGE_ENOTFOUND);
    char expected[600];
    snprintf(expected, sizeof expected, "%s: run %lld does not exist", path,
             (long long)run + 5);
    assert_string_equal(tforge_error_last()->message, expected);

    m.params_json = NULL;
    assert_int_equal(tforge_store_record(NULL, store, run, &m), TFORGE_EINPUT);
    assert_int_equal(tforge_store_count(&n, store, run), 0);
    assert_int_equal(n, 0);

    /* and the store still records */
    m.params_json = "{\"x\":1}";
    assert_int_equal(tforge_store_record(NULL, store, run, &m), 0);
    assert_int_equal(tforge_store_count(&n, store, run), 0);
    assert_int_equal(n, 1);
    tforge_store_close(store);
}

/* ---- one writer per run ---- */

/* Another process claims the run and waits; while it lives, this one may neither claim nor
 * record; once it is killed, its lease is void and the run is this process's. */
static void one_writer_per_run(void **state)
{
    (void)state;
    const char *path = fresh("lease.db");
    tforge_store *store = open_ok(path);
    int64_t run = begin_ok(store, "leased");
    tforge_store_close(store);
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        tforge_store *mine;
        char ok = tforge_store_open(&mine, path) == 0 && tforge_store_claim(mine, run) == 0;
        if (write(ready[1], &ok, 1) != 1)
            _exit(1);
        pause(); /* holds the lease until killed */
        _exit(0);
    }
    close(ready[1]);
    char ok = 0;
    assert_int_equal(read(ready[0], &ok, 1), 1);
    close(ready[0]);
    assert_true(ok);
    store = open_ok(path);
    assert_int_equal(tforge_store_claim(store, run), TFORGE_EINPUT);
    assert_non_null(strstr(tforge_error_last()->message, "is being written by another process"));
    tforge_store_measurement m = {.key = "1", .params_json = "{\"x\":1}"};
    tforge_measurement_init(&m.m);
    assert_int_equal(tforge_store_record(NULL, store, run, &m), TFORGE_EINPUT);
    int64_t n;
    assert_int_equal(tforge_store_count(&n, store, run), 0);
    assert_int_equal(n, 0);
    assert_int_equal(kill(child, SIGKILL), 0);
    assert_int_equal(waitpid(child, NULL, 0), child);
    assert_int_equal(tforge_store_claim(store, run), 0); /* the dead writer's lease is void */
    assert_int_equal(tforge_store_record(NULL, store, run, &m), 0);
    tforge_store_close(store);
    assert_int_equal(sql_int(path, "SELECT writer IS NULL FROM runs"), 1); /* released */
}

/* Stores of schema versions 1 to 4 are upgraded in place, their runs kept, by the reading door
 * (an export's) too. */
static void upgrades_older_versions(void **state)
{
    (void)state;
    static const char *const names[] = {"", "v1.db", "v2.db", "v3.db", "v4.db"};
    for (int version = 1; version <= 4; version++) {
        const char *path = fresh(names[version]);
        tforge_store *store = open_ok(path);
        begin_ok(store, "old");
        tforge_store_close(store);
        sql_exec(path, "DROP TABLE llm_answers; DROP TABLE llm_requests; PRAGMA user_version = 4");
        if (version <= 3)
            sql_exec(path, "DROP TABLE sources; ALTER TABLE configurations DROP COLUMN digest;"
                           " PRAGMA user_version = 3");
        if (version <= 2)
            sql_exec(path, "DROP TABLE profiles; PRAGMA user_version = 2");
        if (version == 1)
            sql_exec(path, "ALTER TABLE runs DROP COLUMN heartbeat; ALTER TABLE runs DROP COLUMN"
                           " writer; ALTER TABLE runs DROP COLUMN inputs; PRAGMA user_version = 1");
        if (version == 2)
            assert_int_equal(tforge_store_open_existing(&store, path), 0);
        else
            store = open_ok(path);
        assert_int_equal(sql_int(path, "SELECT COUNT(*) FROM pragma_table_info('runs') WHERE name"
                                       " IN ('inputs', 'writer', 'heartbeat')"), 3);
        assert_int_equal(sql_int(path, "SELECT COUNT(*) FROM sqlite_master WHERE name IN"
                                       " ('profiles', 'sources')"), 2);
        assert_int_equal(sql_int(path, "SELECT COUNT(*) FROM pragma_table_info('configurations')"
                                       " WHERE name = 'digest'"), 1);
        assert_int_equal(sql_int(path, "SELECT COUNT(*) FROM sqlite_master WHERE name IN"
                                       " ('llm_requests', 'llm_answers')"), 2);
        assert_int_equal(sql_int(path, "PRAGMA user_version"), 5);
        assert_int_equal(sql_int(path, "SELECT COUNT(*) FROM runs"), 1);
        tforge_store_close(store);
    }
}

/* Each variant's source is kept once, by its digest; each configuration names its digest. */
static void keeps_each_source_once(void **state)
{
    (void)state;
    const char *path = fresh("sources.db");
    tforge_store *store = open_ok(path);
    int64_t run = begin_ok(store, "kernel.py");
    tforge_store_measurement m = {.key = "16", .params_json = "{\"x\":16}",
                                  .digest = "fnv1a64:00000000000000aa",
                                  .source = "def k(): pass\n"};
    m.m.status = TFORGE_STATUS_OK;
    m.m.value = 1.0;
    assert_int_equal(tforge_store_record(NULL, store, run, &m), 0);
    m.key = "32"; /* another point of the same variant */
    m.params_json = "{\"x\":32}";
    assert_int_equal(tforge_store_record(NULL, store, run, &m), 0);
    m.key = "64"; /* a variant without its source, and one with neither */
    m.source = NULL;
    assert_int_equal(tforge_store_record(NULL, store, run, &m), 0);
    m.key = "baseline";
    m.digest = NULL;
    assert_int_equal(tforge_store_record(NULL, store, run, &m), 0);
    m.key = "128";
    m.source = "text";
    assert_int_equal(tforge_store_record(NULL, store, run, &m), TFORGE_EINPUT);
    assert_non_null(strstr(tforge_error_last()->message, "a source without its digest"));
    assert_int_equal(sql_int(path, "SELECT COUNT(*) FROM sources"), 1);
    assert_int_equal(sql_int(path, "SELECT COUNT(*) FROM configurations WHERE digest ="
                                   " 'fnv1a64:00000000000000aa'"), 3);
    char *text = NULL;
    assert_int_equal(tforge_store_source(&text, store, "fnv1a64:00000000000000aa"), 0);
    assert_string_equal(text, "def k(): pass\n");
    free(text);
    assert_int_equal(tforge_store_source(&text, store, "fnv1a64:00000000000000bb"),
                     TFORGE_ENOTFOUND);
    assert_null(text);
    tforge_store_close(store);
}

/* ---- a writer killed mid-run ---- */

/* Measurement `seq` of the crash test, a pure function of it, so that every row can be checked. */
static void crash_measurement(tforge_store_measurement *m, int64_t seq, char *key, char *params,
                              char *metrics)
{
    sprintf(key, "%lld", (long long)(seq % 37));
    sprintf(params, "{\"x\":%lld}", (long long)(seq % 37));
    sprintf(metrics, "{\"seq\":%lld}", (long long)seq);
    *m = (tforge_store_measurement){
        .key = key,
        .params_json = params,
        .m.status = seq % 5 == 0 ? TFORGE_STATUS_RUNTIME : TFORGE_STATUS_OK,
        .m.value = seq * 0.5,
        .m.min_ms = seq * 0.25,
        .m.spread = 0.01,
        .m.repeats = (uint32_t)(seq % 100),
        .m.compile_ms = 10,
        .m.wall_ms = 20,
        .metrics_json = metrics,
    };
}

/* The child: resumes the run's sequence and records until killed, reporting each commit. */
static void crash_writer(const char *path, int64_t run, int report)
{
    tforge_store *store;
    int64_t seq, next;
    if (tforge_store_open(&store, path) < 0 || tforge_store_count(&next, store, run) < 0)
        _exit(3);
    for (next++;; next++) {
        tforge_store_measurement m;
        char key[32], params[64], metrics[64];
        crash_measurement(&m, next, key, params, metrics);
        if (tforge_store_record(&seq, store, run, &m) < 0 || seq != next)
            _exit(2);
        if (write(report, &seq, sizeof seq) != sizeof seq)
            _exit(4);
    }
}

typedef struct checker {
    int64_t expected;
    int bad;
} checker;

static int check_row(void *context, const tforge_store_measurement *m)
{
    checker *c = context;
    tforge_store_measurement want;
    char key[32], params[64], metrics[64];
    crash_measurement(&want, ++c->expected, key, params, metrics);
    if (m->sequence != c->expected || strcmp(m->key, key) != 0 ||
        strcmp(m->params_json, params) != 0 || m->m.status != want.m.status ||
        m->m.value != want.m.value || m->m.min_ms != want.m.min_ms ||
        m->m.spread != want.m.spread || m->m.repeats != want.m.repeats ||
        m->m.compile_ms != want.m.compile_ms || m->m.wall_ms != want.m.wall_ms ||
        !m->metrics_json || strcmp(m->metrics_json, metrics) != 0 ||
        !m->timestamp)
        c->bad++;
    return 0;
}

static void survives_a_killed_writer(void **state)
{
    (void)state;
    const char *path = fresh("crash.db");
    tforge_store *store = open_ok(path);
    int64_t run = begin_ok(store, "crash"), committed = 0;
    tforge_store_close(store);
    srand(12345);

    for (int round = 0; round < 5; round++) {
        int fds[2];
        assert_int_equal(pipe(fds), 0);
        fflush(NULL);
        pid_t child = fork();
        assert_true(child >= 0);
        if (child == 0) {
            close(fds[0]);
            crash_writer(path, run, fds[1]);
        }
        close(fds[1]);
        /* Let it commit a few, then kill it at a moment of our choosing (a fixed seed). */
        int64_t seq;
        int seen = 0;
        while (seen < 20 && read(fds[0], &seq, sizeof seq) == sizeof seq) {
            committed = seq;
            seen++;
        }
        assert_int_equal(seen, 20);
        struct timespec pause = {0, (rand() % 40 + 5) * 1000000L};
        nanosleep(&pause, NULL);
        assert_int_equal(kill(child, SIGKILL), 0);
        int status;
        assert_int_equal(waitpid(child, &status, 0), child);
        assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        while (read(fds[0], &seq, sizeof seq) == sizeof seq)
            committed = seq; /* every report is of a commit */
        close(fds[0]);

        assert_int_equal(sql_int(path, "SELECT integrity_check = 'ok' FROM pragma_integrity_check"),
                         1);
        store = open_ok(path);
        int64_t n;
        assert_int_equal(tforge_store_count(&n, store, run), 0);
        assert_true(n >= committed);     /* nothing committed was lost */
        assert_true(n <= committed + 1); /* at most the one committed as it died */
        checker c = {0};
        assert_int_equal(tforge_store_each_measurement(store, run, check_row, &c), 0);
        assert_int_equal(c.expected, n); /* 1..n, no gap, every row complete */
        assert_int_equal(c.bad, 0);
        tforge_store_close(store);
        print_message("round %d: killed after %lld commits\n", round, (long long)n);
        committed = n;
    }

    /* A resumed writer in this process goes on where the killed one stopped. */
    store = open_ok(path);
    tforge_store_measurement m;
    char key[32], params[64], metrics[64];
    int64_t seq;
    crash_measurement(&m, committed + 1, key, params, metrics);
    assert_int_equal(tforge_store_record(&seq, store, run, &m), 0);
    assert_int_equal(seq, committed + 1);
    checker c = {0};
    assert_int_equal(tforge_store_each_measurement(store, run, check_row, &c), 0);
    assert_int_equal(c.expected, committed + 1);
    assert_int_equal(c.bad, 0);
    tforge_store_close(store);
}

/* ---- recordings ---- */

static tforge_recording *small_recording(void)
{
    tforge_recording *rec;
    assert_int_equal(tforge_recording_new(&rec), 0);
    assert_int_equal(tforge_recording_set_info(rec, "GPU", "kern", "\"callable\"", "GFLOP/s"), 0);
    const char *blocks[] = {"16", "32"}, *scales[] = {"0.5", "1.0"}, *modes[] = {"a,b", "c"};
    const double block_values[] = {16, 32}, scale_values[] = {0.5, 1.0};
    assert_int_equal(tforge_recording_add_param(rec, "block", 2, blocks, block_values), 0);
    assert_int_equal(tforge_recording_add_param(rec, "scale", 2, scales, scale_values), 0);
    assert_int_equal(tforge_recording_add_param(rec, "mode", 2, modes, NULL), 0);
    uint32_t gflops;
    assert_int_equal(tforge_recording_metric(&gflops, rec, "GFLOP/s"), 0);

    double times[] = {1.0, 3.0, 2.0, 4.0}, metrics[] = {12.5};
    tforge_level a[] = {0, 1, 0}, b[] = {1, 0, 1};
    tforge_recording_entry ok = {
        .levels = a, .status = TFORGE_STATUS_OK, .time = 2.5, .n_times = 4, .times = times,
        .compile_time = 100, .benchmark_time = 10, .framework_time = NAN,
        .verification_time = 0, .strategy_time = NAN, .metrics = metrics,
        .timestamp = (char *)"2024-01-01 10:00:00+00:00"};
    tforge_recording_entry failed = {
        .levels = b, .status = TFORGE_STATUS_TIMEOUT, .time = NAN, .compile_time = NAN,
        .benchmark_time = NAN, .framework_time = NAN, .verification_time = NAN,
        .strategy_time = NAN};
    assert_int_equal(tforge_recording_add_entry(rec, &ok), 0);
    assert_int_equal(tforge_recording_add_entry(rec, &failed), 0);
    assert_int_equal(tforge_recording_add_entry(rec, &ok), 0); /* measured twice */
    return rec;
}

static void assert_same(const tforge_recording *a, const tforge_recording *b)
{
    char why[512] = "";
    if (tforge_recording_diff(why, sizeof why, a, b) != 0)
        fail_msg("recordings differ: %s", why);
}

static void imports_and_exports_recordings(void **state)
{
    (void)state;
    tforge_store *store = open_ok(fresh("import.db"));
    tforge_recording *rec = small_recording(), *back;
    /* measured without its runs kept (a tforge export): the spread as measured travels */
    tforge_level c1[] = {1, 1, 0};
    tforge_recording_entry untimed_runs = {
        .levels = c1, .status = TFORGE_STATUS_OK, .time = 3.0, .spread = 0.04,
        .compile_time = 90, .benchmark_time = NAN, .framework_time = NAN,
        .verification_time = NAN, .strategy_time = NAN};
    assert_int_equal(tforge_recording_add_entry(rec, &untimed_runs), 0);
    int64_t run, n;
    assert_int_equal(tforge_store_import(&run, store, rec, NULL), 0);
    assert_int_equal(tforge_store_count(&n, store, run), 0);
    assert_int_equal(n, 4);
    tforge_store_run info;
    assert_int_equal(tforge_store_find_run(&info, store, run), 0);
    assert_string_equal(info.source, "kern");
    assert_string_equal(info.strategy, "import");
    assert_int_equal(info.budget, 4);
    tforge_store_run_dispose(&info);

    collected c = {.stop_after = -1};
    assert_int_equal(tforge_store_each_measurement(store, run, collect, &c), 0);
    assert_string_equal(c.keys[0], "16,1.0,a,b");
    assert_true(c.m[0].m.value == 2.5 && c.m[0].m.min_ms == 1.0);
    assert_true(c.m[0].m.spread == (3.25 - 1.75) / 2.5); /* IQR / median of 1, 2, 3, 4 */
    assert_int_equal(c.m[0].m.repeats, 4);
    assert_true(c.m[0].m.wall_ms == 110); /* compile + benchmark + verification */
    assert_int_equal(c.m[0].configuration_id, c.m[2].configuration_id);
    assert_int_equal(c.m[1].m.status, TFORGE_STATUS_TIMEOUT);
    assert_true(c.m[3].m.spread == 0.04 && isnan(c.m[3].m.min_ms));

    assert_int_equal(tforge_store_export(&back, store, run), 0);
    assert_same(rec, back);
    tforge_recording_free(back);

    /* A run the engine made with a space of its own is not a recording. */
    int64_t live = begin_ok(store, "live");
    back = (tforge_recording *)&back;
    assert_int_equal(tforge_store_export(&back, store, live), TFORGE_EINPUT);
    assert_null(back);
    assert_non_null(strstr(tforge_error_last()->message, "space.format: expected"));
    assert_int_equal(tforge_store_export(&back, store, live + 1), TFORGE_ENOTFOUND);
    tforge_recording_free(rec);
    tforge_store_close(store);
}

/* ---- profiles ---- */

typedef struct profiles_seen {
    int n;
    int64_t sequence[4];
    uint32_t counters[4];
    char keys[4][32], metrics[4][128], labels[4][128], notes[4][64];
} profiles_seen;

static int see_profile(void *context, const tforge_store_profile *p)
{
    profiles_seen *s = context;
    assert_true(s->n < 4);
    s->sequence[s->n] = p->sequence;
    s->counters[s->n] = p->counters;
    snprintf(s->keys[s->n], sizeof s->keys[0], "%s", p->key);
    snprintf(s->metrics[s->n], sizeof s->metrics[0], "%s", p->metrics_json);
    snprintf(s->labels[s->n], sizeof s->labels[0], "%s", p->labels_json ? p->labels_json : "-");
    snprintf(s->notes[s->n], sizeof s->notes[0], "%s", p->note ? p->note : "-");
    s->n++;
    return 0;
}

static void records_profiles(void **state)
{
    (void)state;
    tforge_store *store = open_ok(fresh("profiles.db"));
    int64_t run = begin_ok(store, "k");
    tforge_store_measurement m = {.key = "1", .params_json = "{\"B\": 1}"};
    tforge_measurement_init(&m.m);
    m.m.value = 2.0;
    assert_int_equal(tforge_store_record(NULL, store, run, &m), 0);
    tforge_store_profile p = {.key = "1", .params_json = "{\"B\": 1}",
                              .counters = TFORGE_COUNTERS_OK,
                              .metrics_json = "{\"sm_pct\": 41.5, \"registers\": 32}",
                              .labels_json = "[{\"label\": \"memory-bound\"}]"};
    assert_int_equal(tforge_store_record_profile(store, run, &p), 0);
    assert_int_equal(tforge_store_record(NULL, store, run, &m), 0);
    assert_int_equal(tforge_store_record(NULL, store, run, &m), 0);
    /* another configuration, first seen in its profile, counters refused */
    tforge_store_profile q = {.key = "2", .params_json = "{\"B\": 2}",
                              .counters = TFORGE_COUNTERS_REFUSED, .note = "no privileges",
                              .metrics_json = "{\"registers\": 40}"};
    assert_int_equal(tforge_store_record_profile(store, run, &q), 0);

    profiles_seen s = {0};
    assert_int_equal(tforge_store_each_profile(store, run, see_profile, &s), 0);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.keys[0], "1");
    assert_int_equal(s.sequence[0], 1); /* after the run's first measurement */
    assert_int_equal(s.counters[0], TFORGE_COUNTERS_OK);
    assert_string_equal(s.metrics[0], "{\"sm_pct\": 41.5, \"registers\": 32}");
    assert_string_equal(s.labels[0], "[{\"label\": \"memory-bound\"}]");
    assert_string_equal(s.notes[0], "-");
    assert_string_equal(s.keys[1], "2");
    assert_int_equal(s.sequence[1], 3);
    assert_int_equal(s.counters[1], TFORGE_COUNTERS_REFUSED);
    assert_string_equal(s.notes[1], "no privileges");
    assert_string_equal(s.labels[1], "-");

    /* refused: no metrics, a bad state, bad JSON (the schema's check) */
    tforge_store_profile bad = p;
    bad.metrics_json = NULL;
    assert_int_equal(tforge_store_record_profile(store, run, &bad), TFORGE_EINPUT);
    bad = p;
    bad.counters = 9;
    assert_int_equal(tforge_store_record_profile(store, run, &bad), TFORGE_EINPUT);
    bad = p;
    bad.metrics_json = "{not json";
    assert_true(tforge_store_record_profile(store, run, &bad) < 0);
    s.n = 0;
    assert_int_equal(tforge_store_each_profile(store, run, see_profile, &s), 0);
    assert_int_equal(s.n, 2); /* nothing more */
    tforge_store_close(store);
}

/* An exported recording carries the latest profile's metrics of each configuration it has. */
static void exports_the_profiles_metrics(void **state)
{
    (void)state;
    tforge_store *store = open_ok(fresh("export_profiles.db"));
    tforge_recording *rec = small_recording(), *back;
    int64_t run;
    assert_int_equal(tforge_store_import(&run, store, rec, NULL), 0);
    collected c = {.stop_after = -1};
    assert_int_equal(tforge_store_each_measurement(store, run, collect, &c), 0);
    tforge_store_profile old = {.key = c.keys[0], .params_json = "{}",
                                .counters = TFORGE_COUNTERS_OK,
                                .metrics_json = "{\"sm_pct\": 10, \"dram_pct\": 5}"};
    tforge_store_profile p = old;
    p.metrics_json = "{\"sm_pct\": 41.5, \"dram_pct\": 80.25}";
    assert_int_equal(tforge_store_record_profile(store, run, &old), 0);
    assert_int_equal(tforge_store_record_profile(store, run, &p), 0);
    assert_int_equal(tforge_store_export(&back, store, run), 0);
    uint32_t sm = back->n_metrics, dram = back->n_metrics;
    for (uint32_t m = 0; m < back->n_metrics; m++) {
        if (strcmp(back->metric_names[m], "sm_pct") == 0)
            sm = m;
        if (strcmp(back->metric_names[m], "dram_pct") == 0)
            dram = m;
    }
    assert_true(sm < back->n_metrics && dram < back->n_metrics);
    assert_int_equal(back->n_entries, 3);
    for (size_t e = 0; e < 3; e += 2) { /* entries 0 and 2 are the profiled configuration */
        assert_true(back->entries[e].metrics[sm] == 41.5);
        assert_true(back->entries[e].metrics[dram] == 80.25);
    }
    assert_true(isnan(back->entries[1].metrics[sm])); /* not profiled */
    tforge_recording_free(back);
    tforge_recording_free(rec);
    tforge_store_close(store);
}

static void real_caches_survive_the_store(void **state)
{
    (void)state;
    struct stat st;
    if (stat(KTCACHE("convolution_A100.json.gz"), &st) != 0)
        skip();
    const char *files[] = {KTCACHE("convolution_A100.json.gz"),
                           KTCACHE("dedispersion_A100.json.gz")};
    tforge_store *store = open_ok(fresh("real.db"));
    for (size_t f = 0; f < 2; f++) {
        tforge_recording *rec, *back;
        int64_t run, n;
        assert_int_equal(tforge_recording_read(&rec, files[f]), 0);
        assert_int_equal(tforge_store_import(&run, store, rec, NULL), 0);
        assert_int_equal(tforge_store_count(&n, store, run), 0);
        assert_int_equal(n, (int64_t)rec->n_entries);
        assert_int_equal(tforge_store_export(&back, store, run), 0);
        assert_same(rec, back);
        tforge_recording_free(rec);
        tforge_recording_free(back);
    }
    tforge_store_close(store);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(creates_schema_in_wal_mode),
        cmocka_unit_test(refuses_newer_and_foreign_files),
        cmocka_unit_test(begins_and_finds_runs),
        cmocka_unit_test(records_in_sequence),
        cmocka_unit_test(refused_records_leave_nothing),
        cmocka_unit_test(one_writer_per_run),
        cmocka_unit_test(upgrades_older_versions),
        cmocka_unit_test(keeps_each_source_once),
        cmocka_unit_test(records_profiles),
        cmocka_unit_test(exports_the_profiles_metrics),
        cmocka_unit_test(survives_a_killed_writer),
        cmocka_unit_test(imports_and_exports_recordings),
        cmocka_unit_test(real_caches_survive_the_store),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
