#include "store.h"

#include "tforge/error.h"
#include "tforge/log.h"

#include <sqlite3.h>

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SCHEMA_VERSION 5

/* Version 5: every request asked of a language model (by its digest and the how-manieth time the
 * same request was asked, so that a replay serves a run's repeated requests in order) and its
 * answers, a failure's reason among them. */
#define LLM_TABLES                                                                                 \
    "CREATE TABLE llm_requests ("                                                                  \
    " id INTEGER PRIMARY KEY,"                                                                     \
    " digest TEXT NOT NULL,"                                                                       \
    " occurrence INTEGER NOT NULL,"                                                                \
    " model TEXT NOT NULL, system TEXT, user TEXT NOT NULL,"                                       \
    " answers INTEGER NOT NULL, seed INTEGER NOT NULL, seconds REAL,"                              \
    " timestamp TEXT NOT NULL,"                                                                    \
    " UNIQUE (digest, occurrence));"                                                               \
    "CREATE TABLE llm_answers ("                                                                   \
    " request_id INTEGER NOT NULL REFERENCES llm_requests(id) ON DELETE CASCADE,"                  \
    " idx INTEGER NOT NULL,"                                                                       \
    " text TEXT, error TEXT CHECK ((text IS NULL) <> (error IS NULL)),"                            \
    " prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, seconds REAL,"           \
    " PRIMARY KEY (request_id, idx));"

/* Version 4: each variant's source text once, by its digest, and the digest of each
 * configuration's variant (NULL where unknown: a replay, a store of an older version). */
#define SOURCES_TABLE                                                                              \
    "CREATE TABLE sources (digest TEXT PRIMARY KEY, text TEXT NOT NULL);"
#define CONFIGURATION_DIGEST "digest TEXT REFERENCES sources(digest)"

/* Version 3: the profiles of the candidates a run profiled (the baseline, each new incumbent),
 * each after the measurement `seq` of its run. */
#define PROFILES_TABLE                                                                             \
    "CREATE TABLE profiles ("                                                                      \
    " id INTEGER PRIMARY KEY,"                                                                     \
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"                              \
    " configuration_id INTEGER NOT NULL REFERENCES configurations(id),"                            \
    " seq INTEGER NOT NULL,"                                                                       \
    " counters TEXT NOT NULL CHECK (counters IN ('none', 'ok', 'refused', 'failed')),"             \
    " note TEXT,"                                                                                  \
    " metrics TEXT NOT NULL CHECK (json_valid(metrics)),"                                          \
    " labels TEXT CHECK (labels IS NULL OR json_valid(labels)),"                                   \
    " timestamp TEXT);"                                                                            \
    "CREATE INDEX profiles_configuration ON profiles(configuration_id);"

static const char *const schema =
    "CREATE TABLE runs ("
    " id INTEGER PRIMARY KEY,"
    " created TEXT NOT NULL,"
    " source TEXT NOT NULL,"
    " space TEXT CHECK (space IS NULL OR json_valid(space)),"
    " strategy TEXT,"
    " settings TEXT CHECK (settings IS NULL OR json_valid(settings)),"
    " seed INTEGER NOT NULL,"
    " budget INTEGER NOT NULL,"
    " environment TEXT CHECK (environment IS NULL OR json_valid(environment)),"
    " inputs TEXT, writer TEXT, heartbeat REAL);"
    "CREATE TABLE configurations ("
    " id INTEGER PRIMARY KEY,"
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " key TEXT NOT NULL,"
    " params TEXT NOT NULL CHECK (json_valid(params)),"
    " " CONFIGURATION_DIGEST ","
    " UNIQUE (run_id, key));"
    "CREATE TABLE measurements ("
    " id INTEGER PRIMARY KEY,"
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " configuration_id INTEGER NOT NULL REFERENCES configurations(id),"
    " seq INTEGER NOT NULL,"
    " status TEXT NOT NULL CHECK (status IN (%s)),"
    " median REAL, min REAL, spread REAL,"
    " repeats INTEGER NOT NULL,"
    " compile_ms REAL, wall_ms REAL,"
    " metrics TEXT CHECK (metrics IS NULL OR json_valid(metrics)),"
    " timestamp TEXT,"
    " UNIQUE (run_id, seq));"
    "CREATE INDEX measurements_configuration ON measurements(configuration_id);"
    PROFILES_TABLE SOURCES_TABLE LLM_TABLES;


/* Prepared once, kept for the store's life. */
enum {
    ST_BEGIN,
    ST_COMMIT,
    ST_ROLLBACK,
    ST_RUN_INSERT,
    ST_RUN_FIND,
    ST_WRITER,
    ST_CLAIM,
    ST_RELEASE_ALL,
    ST_HEARTBEAT,
    ST_RUN_LIKE,
    ST_RUN_LATEST,
    ST_METRICS,
    ST_CONFIG_FIND,
    ST_CONFIG_INSERT,
    ST_NEXT_SEQ,
    ST_MEASUREMENT_INSERT,
    ST_MEASUREMENTS,
    ST_EXPORTED,
    ST_COUNT,
    ST_PROFILE_INSERT,
    ST_PROFILES,
    ST_SOURCE_INSERT,
    ST_SOURCE_FIND,
    ST_LLM_FORGET,
    ST_LLM_REQUEST_INSERT,
    ST_LLM_ANSWER_INSERT,
    ST_LLM_REQUEST_FIND,
    ST_LLM_ANSWERS,
    ST_LLM_LATEST_MODEL,
    N_STATEMENTS
};

static const char *const statement_sql[N_STATEMENTS] = {
    [ST_BEGIN] = "BEGIN IMMEDIATE",
    [ST_COMMIT] = "COMMIT",
    [ST_ROLLBACK] = "ROLLBACK",
    [ST_RUN_INSERT] = "INSERT INTO runs (created, source, space, strategy, settings, seed, budget,"
                      " environment, inputs) VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'),"
                      " ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    [ST_RUN_FIND] = "SELECT id, created, source, space, strategy, settings, seed, budget,"
                    " environment, inputs FROM runs WHERE id = ?1",
    [ST_WRITER] = "SELECT writer, heartbeat FROM runs WHERE id = ?1",
    [ST_CLAIM] = "UPDATE runs SET writer = ?2, heartbeat = ?3 WHERE id = ?1",
    [ST_RELEASE_ALL] = "UPDATE runs SET writer = NULL WHERE writer = ?1",
    [ST_HEARTBEAT] = "UPDATE runs SET heartbeat = ?2 WHERE id = ?1 AND writer = ?3",
    [ST_RUN_LIKE] = "SELECT id FROM runs WHERE source = ?1 AND strategy IS ?2 AND settings IS ?3"
                    " AND seed = ?4 AND budget = ?5 ORDER BY id DESC LIMIT 1",
    [ST_RUN_LATEST] = "SELECT id FROM runs WHERE source = ?1 ORDER BY id DESC LIMIT 1",
    [ST_METRICS] = "SELECT key, value FROM json_each(?1) WHERE type IN ('integer', 'real')",
    [ST_CONFIG_FIND] = "SELECT id FROM configurations WHERE run_id = ?1 AND key = ?2",
    [ST_CONFIG_INSERT] = "INSERT INTO configurations (run_id, key, params, digest)"
                         " VALUES (?1, ?2, ?3, ?4)",
    [ST_NEXT_SEQ] = "SELECT COALESCE(MAX(seq), 0) + 1 FROM measurements WHERE run_id = ?1",
    [ST_MEASUREMENT_INSERT] =
        "INSERT INTO measurements (run_id, configuration_id, seq, status, median, min, spread,"
        " repeats, compile_ms, wall_ms, metrics, timestamp)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    [ST_MEASUREMENTS] =
        "SELECT m.id, m.configuration_id, m.seq, c.key, c.params, m.status, m.median, m.min,"
        " m.spread, m.repeats, m.compile_ms, m.wall_ms, m.metrics, m.timestamp, c.digest"
        " FROM measurements m JOIN configurations c ON c.id = m.configuration_id"
        " WHERE m.run_id = ?1 ORDER BY m.seq",
    /* as ST_MEASUREMENTS, the metrics merged with those of the configuration's latest profile */
    [ST_EXPORTED] =
        "SELECT m.id, m.configuration_id, m.seq, c.key, c.params, m.status, m.median, m.min,"
        " m.spread, m.repeats, m.compile_ms, m.wall_ms,"
        " CASE WHEN p.metrics IS NULL THEN m.metrics"
        " ELSE json_patch(COALESCE(m.metrics, '{}'), p.metrics) END, m.timestamp, c.digest"
        " FROM measurements m JOIN configurations c ON c.id = m.configuration_id"
        " LEFT JOIN profiles p ON p.id = (SELECT MAX(id) FROM profiles"
        " WHERE configuration_id = m.configuration_id)"
        " WHERE m.run_id = ?1 ORDER BY m.seq",
    [ST_COUNT] = "SELECT COUNT(*) FROM measurements WHERE run_id = ?1",
    [ST_PROFILE_INSERT] =
        "INSERT INTO profiles (run_id, configuration_id, seq, counters, note, metrics, labels,"
        " timestamp) VALUES (?1, ?2, (SELECT COALESCE(MAX(seq), 0) FROM measurements"
        " WHERE run_id = ?1), ?3, ?4, ?5, ?6, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
    [ST_PROFILES] = "SELECT c.key, c.params, p.seq, p.counters, p.note, p.metrics, p.labels"
                    " FROM profiles p JOIN configurations c ON c.id = p.configuration_id"
                    " WHERE p.run_id = ?1 ORDER BY p.id",
    [ST_SOURCE_INSERT] = "INSERT OR IGNORE INTO sources (digest, text) VALUES (?1, ?2)",
    [ST_SOURCE_FIND] = "SELECT text FROM sources WHERE digest = ?1",
    [ST_LLM_FORGET] = "DELETE FROM llm_requests WHERE digest = ?1 AND occurrence = ?2",
    [ST_LLM_REQUEST_INSERT] =
        "INSERT INTO llm_requests (digest, occurrence, model, system, user, answers, seed,"
        " seconds, timestamp) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8,"
        " strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
    [ST_LLM_ANSWER_INSERT] =
        "INSERT INTO llm_answers (request_id, idx, text, error, prompt_tokens, completion_tokens,"
        " seconds) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    [ST_LLM_REQUEST_FIND] = "SELECT id, model, system, user, answers, seed, seconds"
                            " FROM llm_requests WHERE digest = ?1 AND occurrence = ?2",
    [ST_LLM_ANSWERS] = "SELECT text, error, prompt_tokens, completion_tokens, seconds"
                       " FROM llm_answers WHERE request_id = ?1 ORDER BY idx",
    [ST_LLM_LATEST_MODEL] = "SELECT model FROM llm_requests ORDER BY id DESC LIMIT 1",
};

struct tforge_store {
    sqlite3 *db;
    char *path;
    char writer[320]; /* "host pid": this process, as a run's lease names it */
    int read_only;    /* opened to read (tforge_store_open_existing): no lease, no schema */
    int outdated;     /* read-only, of an older schema version: to be upgraded before reading */
    sqlite3_stmt *statements[N_STATEMENTS];
};

/* Translates SQLite's error into ours: "<file>: <what>: <SQLite's message>". */
static int db_error(tforge_store *store, const char *what)
{
    int code = sqlite3_extended_errcode(store->db);
    int ours = TFORGE_EIO;
    if (code == SQLITE_CONSTRAINT_FOREIGNKEY)
        ours = TFORGE_ENOTFOUND;
    else if ((code & 0xff) == SQLITE_CONSTRAINT || code == SQLITE_NOTADB)
        ours = TFORGE_EINPUT;
    return tforge_error_set(ours, "%s: %s: %s", store->path, what, sqlite3_errmsg(store->db));
}

static sqlite3_stmt *statement(tforge_store *store, int which)
{
    sqlite3_stmt *st = store->statements[which];
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return st;
}

/* Steps a statement that returns no row. */
static int step_done(tforge_store *store, int which, const char *what)
{
    sqlite3_stmt *st = store->statements[which];
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_error(store, what);
    sqlite3_reset(st);
    return rc;
}

static int bind_text(sqlite3_stmt *st, int index, const char *text)
{
    return text ? sqlite3_bind_text(st, index, text, -1, SQLITE_STATIC)
                : sqlite3_bind_null(st, index);
}

static int bind_number(sqlite3_stmt *st, int index, double value)
{
    return isnan(value) ? sqlite3_bind_null(st, index) : sqlite3_bind_double(st, index, value);
}

static double column_number(sqlite3_stmt *st, int index)
{
    return sqlite3_column_type(st, index) == SQLITE_NULL ? NAN : sqlite3_column_double(st, index);
}

static const char *column_text(sqlite3_stmt *st, int index)
{
    return (const char *)sqlite3_column_text(st, index);
}

static int begin(tforge_store *store)
{
    statement(store, ST_BEGIN);
    return step_done(store, ST_BEGIN, "begin a transaction");
}

/* Commits when rc is 0, else rolls back; returns rc or the commit's error. */
static int end(tforge_store *store, int rc)
{
    if (rc == 0)
        rc = step_done(store, ST_COMMIT, "commit");
    if (rc < 0 && !sqlite3_get_autocommit(store->db))
        step_done(store, ST_ROLLBACK, "roll back"); /* keeps the first error */
    return rc;
}

/* ---- opening ---- */

static int exec(tforge_store *store, const char *sql, const char *what)
{
    return sqlite3_exec(store->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : db_error(store, what);
}

static int query_int(int64_t *out, tforge_store *store, const char *sql, const char *what)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store->db, sql, -1, &st, NULL) != SQLITE_OK)
        return db_error(store, what);
    int rc = 0;
    if (sqlite3_step(st) == SQLITE_ROW)
        *out = sqlite3_column_int64(st, 0);
    else
        rc = db_error(store, what);
    sqlite3_finalize(st);
    return rc;
}

/* The schema, its status check listing the names measurement.h spells. */
static int create_schema(tforge_store *store)
{
    char names[256] = "", sql[8192];
    size_t used = 0;
    for (uint32_t st = 0; st < TFORGE_STATUS_COUNT; st++)
        used += (size_t)snprintf(names + used, sizeof names - used, "%s'%s'", st ? ", " : "",
                                 tforge_status_name(st));
    snprintf(sql, sizeof sql, schema, names);
    return exec(store, sql, "create the schema");
}

/* Creates the schema in a new file, accepts ours, refuses anything else. Inside a write
 * transaction, so that two processes creating the same file do not both create it. Read-only,
 * it creates nothing and marks an older version `outdated`. */
static int check_schema(tforge_store *store)
{
    int64_t version = 0, tables = 0;
    int rc = store->read_only ? 0 : exec(store, "BEGIN IMMEDIATE", "begin a transaction");
    if (!rc)
        rc = query_int(&version, store, "PRAGMA user_version", "read the schema version");
    if (!rc)
        rc = query_int(&tables, store, "SELECT COUNT(*) FROM sqlite_master", "read the schema");
    if (rc < 0)
        goto cleanup;
    if (version > SCHEMA_VERSION)
        rc = tforge_error_set(TFORGE_EINPUT,
                              "%s: the store's schema is version %lld, newer than this tforge "
                              "knows (%d); use a newer tforge",
                              store->path, (long long)version, SCHEMA_VERSION);
    else if (version == 0 && (tables > 0 || store->read_only))
        rc = tforge_error_set(TFORGE_EINPUT, "%s: %s but not a tforge store (no schema version)",
                              store->path, tables > 0 ? "a SQLite database" : "an empty file");
    else if (store->read_only)
        store->outdated = version < SCHEMA_VERSION;
    else if (version == 0) {
        rc = create_schema(store);
        if (!rc)
            rc = exec(store, "PRAGMA user_version = 5", "set the schema version");
    } else if (version < SCHEMA_VERSION) {
        if (version == 1) /* version 2 adds the runs' input digests and writer lease */
            rc = exec(store, "ALTER TABLE runs ADD COLUMN inputs TEXT;"
                             " ALTER TABLE runs ADD COLUMN writer TEXT;"
                             " ALTER TABLE runs ADD COLUMN heartbeat REAL;",
                      "upgrade the schema to version 2");
        if (!rc && version < 3) /* version 3 adds the profiles */
            rc = exec(store, PROFILES_TABLE " PRAGMA user_version = 3",
                      "upgrade the schema to version 3");
        if (!rc && version < 4) /* version 4 adds the variants' sources */
            rc = exec(store, SOURCES_TABLE " ALTER TABLE configurations ADD COLUMN "
                      CONFIGURATION_DIGEST "; PRAGMA user_version = 4",
                      "upgrade the schema to version 4");
        if (!rc) /* version 5 adds the language model's requests and answers */
            rc = exec(store, LLM_TABLES " PRAGMA user_version = 5",
                      "upgrade the schema to version 5");
    }
cleanup:
    if (store->read_only)
        return rc;
    if (rc == 0)
        return exec(store, "COMMIT", "commit the schema");
    sqlite3_exec(store->db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

/* Opens the file with SQLite's `flags`: read-only (no lease, no schema created or upgraded)
 * unless they say SQLITE_OPEN_READWRITE. */
static int open_store(tforge_store **out, const char *path, int flags)
{
    *out = NULL;
    tforge_store *store = calloc(1, sizeof *store);
    if (!store || !(store->path = strdup(path))) {
        free(store);
        return tforge_error_set(TFORGE_ENOMEM, "%s: out of memory", path);
    }
    store->read_only = !(flags & SQLITE_OPEN_READWRITE);
    int rc = 0;
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        rc = tforge_error_set(TFORGE_EINPUT, "%s: not a regular file (a store is an SQLite file)",
                              path);
        goto cleanup;
    }
    if (sqlite3_open_v2(path, &store->db, flags, NULL) != SQLITE_OK) {
        /* a path where no file can be opened (no such folder, no permission) is the input's */
        rc = !store->db ? tforge_error_set(TFORGE_ENOMEM, "%s: out of memory", path)
             : sqlite3_errcode(store->db) == SQLITE_CANTOPEN
                 ? tforge_error_set(TFORGE_EINPUT, "%s: cannot open or create a store there (%s)",
                                    path, strerror(sqlite3_system_errno(store->db)))
                 : db_error(store, "open");
        goto cleanup;
    }
    sqlite3_extended_result_codes(store->db, 1);
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    snprintf(store->writer, sizeof store->writer, "%s %ld", host, (long)getpid());
    sqlite3_busy_timeout(store->db, 10000);
    /* WAL with synchronous=NORMAL survives a killed process (not a power cut) and commits
     * without an fsync each time. */
    rc = store->read_only ? 0
                          : exec(store, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
                                        " PRAGMA foreign_keys = ON", "set the journal mode");
    if (!rc)
        rc = check_schema(store);
    for (int i = 0; i < N_STATEMENTS && rc == 0 && !store->outdated; i++)
        if (sqlite3_prepare_v3(store->db, statement_sql[i], -1, SQLITE_PREPARE_PERSISTENT,
                               &store->statements[i], NULL) != SQLITE_OK)
            rc = db_error(store, "prepare a statement");
cleanup:
    if (rc < 0) {
        tforge_store_close(store);
        return rc;
    }
    *out = store;
    return 0;
}

int tforge_store_open(tforge_store **out, const char *path)
{
    return open_store(out, path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
}

int tforge_store_open_existing(tforge_store **out, const char *path)
{
    *out = NULL;
    struct stat st;
    if (stat(path, &st) != 0)
        return tforge_error_set(errno == ENOENT || errno == ENOTDIR ? TFORGE_ENOTFOUND
                                                                    : TFORGE_EINPUT,
                                "%s: no store there (%s)", path, strerror(errno));
    int rc = open_store(out, path, SQLITE_OPEN_READONLY);
    if (rc || !(*out)->outdated)
        return rc;
    /* an older schema: upgraded in place, as any open does, before it can be read */
    tforge_store_close(*out);
    return open_store(out, path, SQLITE_OPEN_READWRITE);
}

void tforge_store_close(tforge_store *store)
{
    if (!store)
        return;
    /* the leases this process holds end with it */
    if (store->statements[ST_RELEASE_ALL] && !store->read_only) {
        sqlite3_stmt *st = statement(store, ST_RELEASE_ALL);
        bind_text(st, 1, store->writer);
        sqlite3_step(st);
        sqlite3_reset(st);
    }
    for (int i = 0; i < N_STATEMENTS; i++)
        sqlite3_finalize(store->statements[i]);
    sqlite3_close(store->db);
    free(store->path);
    free(store);
}

/* ---- runs ---- */

int tforge_store_begin_run(int64_t *run_id, tforge_store *store, const tforge_store_run *run)
{
    if (!run->source)
        return tforge_error_set(TFORGE_EINPUT, "%s: begin a run: the source is required",
                                store->path);
    sqlite3_stmt *st = statement(store, ST_RUN_INSERT);
    bind_text(st, 1, run->source);
    bind_text(st, 2, run->space_json);
    bind_text(st, 3, run->strategy);
    bind_text(st, 4, run->settings_json);
    sqlite3_bind_int64(st, 5, (int64_t)run->seed); /* reads back bit for bit */
    sqlite3_bind_int64(st, 6, run->budget);
    bind_text(st, 7, run->environment_json);
    bind_text(st, 8, run->inputs);
    int rc = step_done(store, ST_RUN_INSERT, "begin a run");
    if (rc == 0)
        *run_id = sqlite3_last_insert_rowid(store->db);
    return rc;
}

static int copy_column(char **slot, sqlite3_stmt *st, int index)
{
    const char *text = column_text(st, index);
    *slot = text ? strdup(text) : NULL;
    return text && !*slot ? tforge_error_set(TFORGE_ENOMEM, "store: out of memory") : 0;
}

int tforge_store_find_run(tforge_store_run *run, tforge_store *store, int64_t run_id)
{
    memset(run, 0, sizeof *run);
    sqlite3_stmt *st = statement(store, ST_RUN_FIND);
    sqlite3_bind_int64(st, 1, run_id);
    int step = sqlite3_step(st), rc = 0;
    if (step == SQLITE_DONE)
        rc = tforge_error_set(TFORGE_ENOTFOUND, "%s: run %lld does not exist", store->path,
                              (long long)run_id);
    else if (step != SQLITE_ROW)
        rc = db_error(store, "find a run");
    if (rc == 0) {
        run->id = sqlite3_column_int64(st, 0);
        run->seed = (uint64_t)sqlite3_column_int64(st, 6);
        run->budget = (uint32_t)sqlite3_column_int64(st, 7);
        char **texts[] = {&run->created,  &run->source,        &run->space_json,
                          &run->strategy, &run->settings_json, NULL,
                          NULL,           &run->environment_json, &run->inputs};
        for (int i = 1; i <= 9 && rc == 0; i++)
            if (texts[i - 1])
                rc = copy_column(texts[i - 1], st, i);
    }
    sqlite3_reset(st);
    if (rc < 0)
        tforge_store_run_dispose(run);
    return rc;
}

int tforge_store_find_run_like(int64_t *run_id, tforge_store *store,
                               const tforge_store_run *like)
{
    sqlite3_stmt *st = statement(store, ST_RUN_LIKE);
    sqlite3_bind_text(st, 1, like->source, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, like->strategy, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, like->settings_json, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, (sqlite3_int64)like->seed);
    sqlite3_bind_int64(st, 5, like->budget);
    int step = sqlite3_step(st), rc = 0;
    if (step == SQLITE_ROW)
        *run_id = sqlite3_column_int64(st, 0);
    else if (step == SQLITE_DONE)
        rc = tforge_error_set(TFORGE_ENOTFOUND, "%s: no run of %s with these settings",
                              store->path, like->source);
    else
        rc = db_error(store, "find a run");
    sqlite3_reset(st);
    return rc;
}

int tforge_store_find_latest(int64_t *run_id, tforge_store *store, const char *source)
{
    sqlite3_stmt *st = statement(store, ST_RUN_LATEST);
    sqlite3_bind_text(st, 1, source, -1, SQLITE_STATIC);
    int step = sqlite3_step(st), rc = 0;
    if (step == SQLITE_ROW)
        *run_id = sqlite3_column_int64(st, 0);
    else if (step == SQLITE_DONE)
        rc = tforge_error_set(TFORGE_ENOTFOUND, "%s: no run of %s", store->path, source);
    else
        rc = db_error(store, "find a run");
    sqlite3_reset(st);
    return rc;
}

void tforge_store_run_dispose(tforge_store_run *run)
{
    free(run->created);
    free(run->source);
    free(run->space_json);
    free(run->strategy);
    free(run->settings_json);
    free(run->environment_json);
    free(run->inputs);
    memset(run, 0, sizeof *run);
}

/* ---- measurements ---- */

/* Inside a transaction: the configuration on first sight, then the measurement. */
/* The id of the run's configuration `key`, created (with `params_json`) on first sight. */
static int configuration_id(int64_t *out, tforge_store *store, int64_t run_id, const char *key,
                            const char *params_json, const char *digest)
{
    sqlite3_stmt *st = statement(store, ST_CONFIG_FIND);
    sqlite3_bind_int64(st, 1, run_id);
    bind_text(st, 2, key);
    int step = sqlite3_step(st);
    *out = step == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    if (step != SQLITE_ROW && step != SQLITE_DONE)
        return db_error(store, "find a configuration");
    if (step == SQLITE_ROW)
        return 0;
    st = statement(store, ST_CONFIG_INSERT);
    sqlite3_bind_int64(st, 1, run_id);
    bind_text(st, 2, key);
    bind_text(st, 3, params_json);
    bind_text(st, 4, digest);
    int rc = 0;
    if (sqlite3_step(st) != SQLITE_DONE)
        rc = sqlite3_extended_errcode(store->db) == SQLITE_CONSTRAINT_FOREIGNKEY
                 ? tforge_error_set(TFORGE_ENOTFOUND, "%s: run %lld does not exist",
                                    store->path, (long long)run_id)
                 : db_error(store, "add a configuration");
    sqlite3_reset(st);
    *out = sqlite3_last_insert_rowid(store->db);
    return rc;
}

static int insert_measurement(int64_t *sequence, tforge_store *store, int64_t run_id,
                              const tforge_store_measurement *m, const char *timestamp)
{
    if (!m->key || !m->params_json)
        return tforge_error_set(TFORGE_EINPUT, "%s: record: the key and params_json are required",
                                store->path);
    if (m->m.status >= TFORGE_STATUS_COUNT)
        return tforge_error_set(TFORGE_EINPUT, "%s: record: unknown status %d", store->path,
                                (int)m->m.status);
    if (m->source && !m->digest)
        return tforge_error_set(TFORGE_EINPUT, "%s: record: a source without its digest",
                                store->path);
    int rc = 0;
    if (m->source) { /* kept once, by digest */
        sqlite3_stmt *st = statement(store, ST_SOURCE_INSERT);
        bind_text(st, 1, m->digest);
        bind_text(st, 2, m->source);
        rc = step_done(store, ST_SOURCE_INSERT, "keep a variant's source");
    }
    int64_t config_id;
    if (!rc)
        rc = configuration_id(&config_id, store, run_id, m->key, m->params_json, m->digest);
    if (rc < 0)
        return rc;

    sqlite3_stmt *st = statement(store, ST_NEXT_SEQ);
    sqlite3_bind_int64(st, 1, run_id);
    int step = sqlite3_step(st);
    int64_t seq = sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
    if (step != SQLITE_ROW)
        return db_error(store, "number a measurement");

    st = statement(store, ST_MEASUREMENT_INSERT);
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_int64(st, 2, config_id);
    sqlite3_bind_int64(st, 3, seq);
    char metrics[TFORGE_MEASUREMENT_METRICS * (TFORGE_METRIC_NAME_SIZE + 32) + 4];
    const char *metrics_json = m->metrics_json;
    if (!metrics_json && tforge_measurement_metrics_json(&m->m, metrics, sizeof metrics))
        metrics_json = metrics;
    bind_text(st, 4, tforge_status_name(m->m.status));
    bind_number(st, 5, m->m.value);
    bind_number(st, 6, m->m.min_ms);
    bind_number(st, 7, m->m.spread);
    sqlite3_bind_int64(st, 8, m->m.repeats);
    bind_number(st, 9, m->m.compile_ms);
    bind_number(st, 10, m->m.wall_ms);
    bind_text(st, 11, metrics_json);
    bind_text(st, 12, timestamp);
    rc = step_done(store, ST_MEASUREMENT_INSERT, "add a measurement");
    if (rc == 0 && sequence)
        *sequence = seq;
    return rc;
}

/* ---- one writer per run: a lease in the run's row ---- */

/* A lease older than this, held on another host, is taken as abandoned (its writer cannot be
 * asked whether it lives); every recorded measurement renews the lease. */
#define LEASE_S 600.0

static double unix_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Whether the lease `writer` (renewed at `heartbeat`) still belongs to a live process. */
static int lease_alive(const tforge_store *store, const char *writer, double heartbeat)
{
    char host[256];
    long pid;
    if (sscanf(writer, "%255s %ld", host, &pid) != 2)
        return 0;
    char mine[256] = "";
    gethostname(mine, sizeof mine - 1);
    if (strcmp(host, mine) == 0)
        return pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
    (void)store;
    return unix_now() - heartbeat < LEASE_S;
}

/* Inside a transaction: 0 when this process may write run `run_id`, else why not. */
static int check_lease(tforge_store *store, int64_t run_id, int claim)
{
    sqlite3_stmt *st = statement(store, ST_WRITER);
    sqlite3_bind_int64(st, 1, run_id);
    int step = sqlite3_step(st), rc = 0;
    char writer[320] = "";
    double heartbeat = 0;
    if (step == SQLITE_ROW) {
        const char *w = column_text(st, 0);
        snprintf(writer, sizeof writer, "%s", w ? w : "");
        heartbeat = sqlite3_column_double(st, 1);
    }
    sqlite3_reset(st);
    if (step == SQLITE_DONE)
        return tforge_error_set(TFORGE_ENOTFOUND, "%s: run %lld does not exist", store->path,
                                (long long)run_id);
    if (step != SQLITE_ROW)
        return db_error(store, "read a run's writer");
    int ours = strcmp(writer, store->writer) == 0;
    if (writer[0] && !ours && lease_alive(store, writer, heartbeat))
        return tforge_error_set(TFORGE_EINPUT, "%s: run %lld is being written by another "
                                "process (%s); one run has one writer: wait for it, or begin "
                                "another run", store->path, (long long)run_id, writer);
    st = statement(store, claim || !ours ? ST_CLAIM : ST_HEARTBEAT);
    sqlite3_bind_int64(st, 1, run_id);
    if (claim || !ours) {
        if (!claim && !writer[0]) /* nobody claimed it: record without taking the lease */
            return 0;
        bind_text(st, 2, store->writer);
        sqlite3_bind_double(st, 3, unix_now());
        rc = step_done(store, ST_CLAIM, "claim a run");
    } else {
        sqlite3_bind_double(st, 2, unix_now());
        bind_text(st, 3, store->writer);
        rc = step_done(store, ST_HEARTBEAT, "renew a run's lease");
    }
    return rc;
}

int tforge_store_claim(tforge_store *store, int64_t run_id)
{
    int rc = begin(store);
    if (rc < 0)
        return rc;
    return end(store, check_lease(store, run_id, 1));
}

int tforge_store_record(int64_t *sequence, tforge_store *store, int64_t run_id,
                        const tforge_store_measurement *measurement)
{
    char now[32];
    const char *timestamp = measurement->timestamp;
    if (!timestamp) {
        struct timespec ts;
        struct tm utc;
        clock_gettime(CLOCK_REALTIME, &ts);
        gmtime_r(&ts.tv_sec, &utc);
        size_t n = strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%S", &utc);
        snprintf(now + n, sizeof now - n, ".%03ldZ", ts.tv_nsec / 1000000);
        timestamp = now;
    }
    int rc = begin(store);
    if (rc < 0)
        return rc;
    rc = check_lease(store, run_id, 0);
    if (!rc)
        rc = insert_measurement(sequence, store, run_id, measurement, timestamp);
    return end(store, rc);
}

int tforge_store_keep_source(tforge_store *store, const char *digest, const char *text)
{
    int rc = begin(store);
    if (!rc) {
        sqlite3_stmt *st = statement(store, ST_SOURCE_INSERT);
        bind_text(st, 1, digest);
        bind_text(st, 2, text);
        rc = step_done(store, ST_SOURCE_INSERT, "keep a variant's source");
    }
    return end(store, rc);
}

int tforge_store_source(char **text, tforge_store *store, const char *digest)
{
    *text = NULL;
    sqlite3_stmt *st = statement(store, ST_SOURCE_FIND);
    bind_text(st, 1, digest);
    int step = sqlite3_step(st);
    if (step == SQLITE_ROW && !(*text = strdup(column_text(st, 0))))
        step = SQLITE_NOMEM;
    sqlite3_reset(st);
    if (step == SQLITE_ROW)
        return 0;
    if (step == SQLITE_DONE)
        return tforge_error_set(TFORGE_ENOTFOUND, "%s: no source of digest %s", store->path,
                                digest);
    return step == SQLITE_NOMEM ? tforge_error_set(TFORGE_ENOMEM, "out of memory")
                                : db_error(store, "read a source");
}

/* The numeric top-level entries of a metrics object, as far as the measurement holds them. */
static void read_metrics(tforge_store *store, tforge_measurement *m, const char *json)
{
    sqlite3_stmt *st = statement(store, ST_METRICS);
    bind_text(st, 1, json);
    while (sqlite3_step(st) == SQLITE_ROW && m->n_metrics < TFORGE_MEASUREMENT_METRICS) {
        const char *name = column_text(st, 0);
        if (name)
            tforge_measurement_set_metric(m, name, sqlite3_column_double(st, 1));
    }
    sqlite3_reset(st);
    tforge_error_clear(); /* a name that is not an identifier is simply not a metric */
}

/* Visits the rows of `which` (ST_MEASUREMENTS or ST_EXPORTED). */
static int each_measurement(tforge_store *store, int which, int64_t run_id,
                            tforge_store_visit visit, void *context)
{
    sqlite3_stmt *st = statement(store, which);
    sqlite3_bind_int64(st, 1, run_id);
    int rc = 0, step;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        tforge_store_measurement m = {
            .id = sqlite3_column_int64(st, 0),
            .configuration_id = sqlite3_column_int64(st, 1),
            .sequence = sqlite3_column_int64(st, 2),
            .key = column_text(st, 3),
            .params_json = column_text(st, 4),
            .metrics_json = column_text(st, 12),
            .timestamp = column_text(st, 13),
            .digest = column_text(st, 14),
        };
        tforge_measurement_init(&m.m);
        m.m.value = m.m.median_ms = column_number(st, 6);
        m.m.min_ms = column_number(st, 7);
        m.m.spread = column_number(st, 8);
        m.m.repeats = (uint32_t)sqlite3_column_int64(st, 9);
        m.m.compile_ms = column_number(st, 10);
        m.m.wall_ms = column_number(st, 11);
        if (tforge_status_parse(&m.m.status, column_text(st, 5)))
            m.m.status = TFORGE_STATUS_RUNTIME; /* the schema's CHECK makes this unreachable */
        if (m.metrics_json)
            read_metrics(store, &m.m, m.metrics_json);
        rc = visit(context, &m);
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = db_error(store, "list measurements");
    sqlite3_reset(st);
    return rc;
}

int tforge_store_each_measurement(tforge_store *store, int64_t run_id, tforge_store_visit visit,
                                  void *context)
{
    return each_measurement(store, ST_MEASUREMENTS, run_id, visit, context);
}

int tforge_store_count(int64_t *count, tforge_store *store, int64_t run_id)
{
    sqlite3_stmt *st = statement(store, ST_COUNT);
    sqlite3_bind_int64(st, 1, run_id);
    int rc = sqlite3_step(st) == SQLITE_ROW ? 0 : db_error(store, "count measurements");
    *count = rc == 0 ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    return rc;
}

/* ---- profiles ---- */

static const char *const counters_names[] = {"none", "ok", "refused", "failed"};

int tforge_store_record_profile(tforge_store *store, int64_t run_id,
                                const tforge_store_profile *profile)
{
    if (!profile->key || !profile->params_json || !profile->metrics_json ||
        profile->counters >= sizeof counters_names / sizeof *counters_names)
        return tforge_error_set(TFORGE_EINPUT, "%s: record a profile: the key, params_json, "
                                "metrics_json and a counters state are required", store->path);
    int rc = begin(store);
    if (rc < 0)
        return rc;
    int64_t config_id = 0;
    rc = check_lease(store, run_id, 0);
    if (!rc)
        rc = configuration_id(&config_id, store, run_id, profile->key, profile->params_json,
                              NULL);
    if (!rc) {
        sqlite3_stmt *st = statement(store, ST_PROFILE_INSERT);
        sqlite3_bind_int64(st, 1, run_id);
        sqlite3_bind_int64(st, 2, config_id);
        bind_text(st, 3, counters_names[profile->counters]);
        bind_text(st, 4, profile->note);
        bind_text(st, 5, profile->metrics_json);
        bind_text(st, 6, profile->labels_json);
        if (sqlite3_step(st) != SQLITE_DONE)
            rc = db_error(store, "record a profile");
        sqlite3_reset(st);
    }
    return end(store, rc);
}

int tforge_store_each_profile(tforge_store *store, int64_t run_id,
                              tforge_store_profile_visit visit, void *context)
{
    sqlite3_stmt *st = statement(store, ST_PROFILES);
    sqlite3_bind_int64(st, 1, run_id);
    int rc = 0, step;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        tforge_store_profile p = {
            .key = column_text(st, 0),
            .params_json = column_text(st, 1),
            .sequence = sqlite3_column_int64(st, 2),
            .note = column_text(st, 4),
            .metrics_json = column_text(st, 5),
            .labels_json = column_text(st, 6),
        };
        const char *counters = column_text(st, 3);
        for (uint32_t c = 0; c < sizeof counters_names / sizeof *counters_names; c++)
            if (counters && strcmp(counters, counters_names[c]) == 0)
                p.counters = c;
        rc = visit(context, &p);
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = db_error(store, "list profiles");
    sqlite3_reset(st);
    return rc;
}

/* ---- a language model's requests and answers ---- */

int tforge_store_record_llm(tforge_store *store, const tforge_store_llm_exchange *x)
{
    int rc = begin(store);
    if (rc < 0)
        return rc;
    /* the same request asked again in a later run: its latest answers are the ones kept */
    sqlite3_stmt *st = statement(store, ST_LLM_FORGET);
    bind_text(st, 1, x->digest);
    sqlite3_bind_int64(st, 2, x->occurrence);
    rc = step_done(store, ST_LLM_FORGET, "forget an earlier request");
    if (!rc) {
        st = statement(store, ST_LLM_REQUEST_INSERT);
        bind_text(st, 1, x->digest);
        sqlite3_bind_int64(st, 2, x->occurrence);
        bind_text(st, 3, x->model);
        bind_text(st, 4, x->system);
        bind_text(st, 5, x->user);
        sqlite3_bind_int64(st, 6, x->asked);
        sqlite3_bind_int64(st, 7, (int64_t)x->seed); /* reads back bit for bit */
        bind_number(st, 8, x->seconds);
        rc = step_done(store, ST_LLM_REQUEST_INSERT, "record a model's request");
    }
    int64_t request_id = rc ? 0 : sqlite3_last_insert_rowid(store->db);
    for (uint32_t i = 0; !rc && i < x->n; i++) {
        const tforge_llm_answer *a = &x->answers[i];
        st = statement(store, ST_LLM_ANSWER_INSERT);
        sqlite3_bind_int64(st, 1, request_id);
        sqlite3_bind_int64(st, 2, i);
        bind_text(st, 3, a->text);
        /* an answer is text or why there is none: a plugin that gave neither said nothing */
        bind_text(st, 4, a->text ? NULL : a->error ? a->error : "no answer and no reason given");
        sqlite3_bind_int64(st, 5, (int64_t)a->prompt_tokens);
        sqlite3_bind_int64(st, 6, (int64_t)a->completion_tokens);
        bind_number(st, 7, a->seconds);
        rc = step_done(store, ST_LLM_ANSWER_INSERT, "record a model's answer");
    }
    return end(store, rc);
}

static int copy_text(const char **slot, sqlite3_stmt *st, int index)
{
    return copy_column((char **)slot, st, index);
}

int tforge_store_find_llm(tforge_store_llm_exchange *x, tforge_store *store, const char *digest,
                          uint32_t occurrence)
{
    memset(x, 0, sizeof *x);
    sqlite3_stmt *st = statement(store, ST_LLM_REQUEST_FIND);
    bind_text(st, 1, digest);
    sqlite3_bind_int64(st, 2, occurrence);
    int step = sqlite3_step(st), rc = 0;
    int64_t request_id = 0;
    if (step == SQLITE_DONE)
        rc = tforge_error_set(TFORGE_ENOTFOUND, "%s: no model request %s (asked %u times before)",
                              store->path, digest, occurrence);
    else if (step != SQLITE_ROW)
        rc = db_error(store, "find a model's request");
    if (!rc) {
        request_id = sqlite3_column_int64(st, 0);
        x->occurrence = occurrence;
        x->asked = (uint32_t)sqlite3_column_int64(st, 4);
        x->seed = (uint64_t)sqlite3_column_int64(st, 5);
        x->seconds = column_number(st, 6);
        x->digest = strdup(digest);
        rc = x->digest ? 0 : tforge_error_set(TFORGE_ENOMEM, "store: out of memory");
        for (int i = 1; i <= 3 && !rc; i++)
            rc = copy_text(i == 1 ? &x->model : i == 2 ? &x->system : &x->user, st, i);
    }
    sqlite3_reset(st);
    if (!rc) {
        st = statement(store, ST_LLM_ANSWERS);
        sqlite3_bind_int64(st, 1, request_id);
        while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
            tforge_llm_answer *grown = realloc((void *)x->answers, (x->n + 1) * sizeof *grown);
            if (!grown) {
                rc = tforge_error_set(TFORGE_ENOMEM, "store: out of memory");
                break;
            }
            x->answers = grown;
            tforge_llm_answer *a = &grown[x->n++];
            *a = (tforge_llm_answer){NULL, NULL, (uint64_t)sqlite3_column_int64(st, 2),
                                     (uint64_t)sqlite3_column_int64(st, 3), column_number(st, 4)};
            rc = copy_text(&a->text, st, 0);
            if (!rc)
                rc = copy_text(&a->error, st, 1);
        }
        if (!rc && step != SQLITE_DONE)
            rc = db_error(store, "read a model's answers");
        sqlite3_reset(st);
    }
    if (rc < 0)
        tforge_store_llm_dispose(x);
    return rc;
}

void tforge_store_llm_dispose(tforge_store_llm_exchange *x)
{
    for (uint32_t i = 0; x->answers && i < x->n; i++) {
        free((void *)x->answers[i].text);
        free((void *)x->answers[i].error);
    }
    free((void *)x->answers);
    free((void *)x->digest);
    free((void *)x->model);
    free((void *)x->system);
    free((void *)x->user);
    memset(x, 0, sizeof *x);
}

int tforge_store_llm_latest_model(char **model, tforge_store *store)
{
    *model = NULL;
    sqlite3_stmt *st = statement(store, ST_LLM_LATEST_MODEL);
    int step = sqlite3_step(st), rc = 0;
    if (step == SQLITE_ROW)
        rc = copy_column(model, st, 0);
    else if (step == SQLITE_DONE)
        rc = tforge_error_set(TFORGE_ENOTFOUND, "%s: no model was asked anything in this store",
                              store->path);
    else
        rc = db_error(store, "find the latest model");
    sqlite3_reset(st);
    return rc;
}

/* ---- recordings ---- */

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Linear interpolation between order statistics, as numpy's default. */
static double quantile(const double *sorted, uint32_t n, double q)
{
    double h = (n - 1) * q;
    uint32_t lo = (uint32_t)h;
    return lo + 1 < n ? sorted[lo] + (h - lo) * (sorted[lo + 1] - sorted[lo]) : sorted[lo];
}

/* min, and spread = IQR / median, of an entry's runs; without runs, min NAN and the spread
 * recorded as measured (NAN when unknown). */
static int summarize_times(double *min, double *spread, const tforge_recording_entry *entry)
{
    *min = NAN;
    *spread = entry->spread > 0 ? entry->spread : NAN;
    if (entry->n_times == 0)
        return 0;
    double *sorted = malloc(entry->n_times * sizeof *sorted);
    if (!sorted)
        return tforge_error_set(TFORGE_ENOMEM, "store: out of memory");
    memcpy(sorted, entry->times, entry->n_times * sizeof *sorted);
    qsort(sorted, entry->n_times, sizeof *sorted, compare_doubles);
    double median = quantile(sorted, entry->n_times, 0.5);
    *min = sorted[0];
    *spread = median > 0 ? (quantile(sorted, entry->n_times, 0.75) -
                            quantile(sorted, entry->n_times, 0.25)) / median
                         : 0;
    free(sorted);
    return 0;
}

static double wall_time(const tforge_recording_entry *entry)
{
    const double parts[] = {entry->compile_time, entry->benchmark_time, entry->framework_time,
                            entry->verification_time, entry->strategy_time};
    double sum = NAN;
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
        if (!isnan(parts[i]))
            sum = isnan(sum) ? parts[i] : sum + parts[i];
    return sum;
}

static int import_entry(tforge_store *store, int64_t run_id, const tforge_recording *rec,
                        const tforge_recording_entry *entry)
{
    char *key = NULL, *params = NULL, *extras = NULL;
    tforge_store_measurement m = {.timestamp = entry->timestamp};
    tforge_measurement_init(&m.m);
    m.m.status = entry->status;
    m.m.value = m.m.median_ms = entry->time;
    m.m.repeats = entry->n_times;
    m.m.compile_ms = entry->compile_time;
    m.m.wall_ms = wall_time(entry);
    int rc = summarize_times(&m.m.min_ms, &m.m.spread, entry);
    if (!rc)
        rc = tforge_recording_key(&key, rec, entry->levels);
    if (!rc)
        rc = tforge_recording_config_json(&params, rec, entry->levels);
    if (!rc)
        rc = tforge_recording_extras_json(&extras, rec, entry);
    if (!rc) {
        m.key = key;
        m.params_json = params;
        m.metrics_json = extras;
        rc = insert_measurement(NULL, store, run_id, &m, entry->timestamp);
    }
    free(key);
    free(params);
    free(extras);
    return rc;
}

int tforge_store_import(int64_t *run_id, tforge_store *store, const tforge_recording *rec,
                        const tforge_store_run *run)
{
    tforge_store_run info = {.source = rec->kernel_name, .strategy = "import",
                             .budget = (uint32_t)rec->n_entries};
    if (run)
        info = *run;
    int rc = tforge_recording_space_json(&info.space_json, rec);
    if (rc < 0)
        return rc;
    int64_t id = 0;
    rc = begin(store);
    if (rc == 0) {
        rc = tforge_store_begin_run(&id, store, &info);
        for (size_t i = 0; i < rec->n_entries && rc == 0; i++)
            rc = import_entry(store, id, rec, &rec->entries[i]);
        rc = end(store, rc);
    }
    free(info.space_json);
    if (rc == 0)
        *run_id = id;
    return rc;
}

typedef struct exporter {
    tforge_recording *rec;
    tforge_level *levels;
    const char *where;
    size_t outside; /* measurements of configurations outside the space (a task's baselines) */
    size_t untimed; /* ran correctly but untimed (interpret, compile): a recording needs times */
} exporter;

static int export_measurement(void *context, const tforge_store_measurement *m)
{
    exporter *x = context;
    tforge_recording_entry entry = {
        .levels = x->levels,
        .status = m->m.status,
        .time = m->m.value,
        .compile_time = m->m.compile_ms,
        .timestamp = (char *)m->timestamp, /* copied by add_entry */
    };
    int rc = tforge_recording_config_levels(x->levels, x->rec, m->params_json, x->where);
    if (!rc && m->m.status == TFORGE_STATUS_OK && !isfinite(m->m.value)) {
        x->untimed++;
        return 0;
    }
    if (rc == TFORGE_EINPUT && strcmp(m->key, m->params_json) == 0) {
        x->outside++; /* recorded by its own text, not by levels of the space: not an entry */
        tforge_error_clear();
        return 0;
    }
    if (!rc)
        rc = tforge_recording_extras_read(&entry, x->rec, m->metrics_json, x->where);
    if (!rc && entry.n_times == 0 && isfinite(m->m.spread))
        entry.spread = m->m.spread; /* the noise as measured, where the runs were not kept */
    if (!rc)
        rc = tforge_recording_add_entry(x->rec, &entry);
    free(entry.times);
    free(entry.metrics);
    return rc;
}

int tforge_store_export(tforge_recording **out, tforge_store *store, int64_t run_id)
{
    *out = NULL;
    char where[1024];
    snprintf(where, sizeof where, "%s: run %lld", store->path, (long long)run_id);
    tforge_store_run run;
    exporter x = {.where = where};
    int rc = tforge_store_find_run(&run, store, run_id);
    if (rc < 0)
        return rc;
    rc = tforge_recording_from_space_json(&x.rec, run.space_json, where);
    if (rc < 0)
        goto cleanup;
    x.levels = malloc((x.rec->n_params ? x.rec->n_params : 1) * sizeof *x.levels);
    if (!x.levels) {
        rc = tforge_error_set(TFORGE_ENOMEM, "store: out of memory");
        goto cleanup;
    }
    rc = each_measurement(store, ST_EXPORTED, run_id, export_measurement, &x);
    if (rc < 0)
        goto cleanup;
    if (x.outside)
        tforge_log(TFORGE_LOG_WARN, "%s: %zu measurements of configurations outside the run's "
                   "space (baselines) are not exported", where, x.outside);
    if (x.untimed)
        tforge_log(TFORGE_LOG_WARN, "%s: %zu correct but untimed measurements are not exported "
                   "(a recording holds times)", where, x.untimed);
    if (x.rec->n_entries == 0) {
        rc = tforge_error_set(TFORGE_EINPUT, "%s: nothing to export: no measurement of the run "
                              "is a timed point of its space", where);
        goto cleanup;
    }
    *out = x.rec;
    x.rec = NULL;
cleanup:
    tforge_recording_free(x.rec);
    free(x.levels);
    tforge_store_run_dispose(&run);
    return rc;
}
