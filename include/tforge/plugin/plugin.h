/* The TritonForge plugin ABI, version 1.3: what a plugin author includes, and nothing else.
 *
 * A plugin is a shared object that exports one symbol, `tforge_plugin_entry`, of type
 * `tforge_plugin_module`. Its first field is the ABI version: the host reads it before running
 * any of the plugin's code and refuses a module of another major version. A module then offers
 * any number of factories, each of one kind and looked up by a string id; what a factory can do
 * is the kind-specific interface table it points to, named by `interface_id` ("tforge.strategy/1").
 *
 * Rules that keep the layout stable: structs shipped in a release never change; tables only grow
 * at the end, and each field past 1.0 says the ABI minor that added it ("since 1.1"): the host
 * reads such a field of a plugin's struct only when the module declares that minor or a later
 * one, and a plugin checks the host table's `struct_size` before using a newer host field;
 * memory is freed by whoever allocated it, never across the dlopen boundary.
 *
 * The types every kind shares (levels, statuses, the space view, observations, measurements) are
 * in types.h; each kind's interface in a header of its own: strategy.h (ask/tell), transform.h
 * (source rewrites, over the analysis IR of ir.h), profiler.h and heuristic.h (over the profiles
 * of profile.h), and the drafts costmodel.h and llm.h. ABI 1.2 added set_level_prior to
 * strategies; 1.3 what a dimension is (its owner and effect, types.h) to the space view and to a
 * transform's parameters. `sdk/` (installed beside these
 * headers as tforge/sdk/) holds the helpers in-tree plugins use, so an out-of-tree one copies
 * nothing.
 */
#ifndef TFORGE_PLUGIN_PLUGIN_H
#define TFORGE_PLUGIN_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TFORGE_PLUGIN_ABI_MAJOR 1u
#define TFORGE_PLUGIN_ABI_MINOR 3u
#define TFORGE_PLUGIN_ABI_VERSION_INIT {TFORGE_PLUGIN_ABI_MAJOR, TFORGE_PLUGIN_ABI_MINOR, 0u}

#if defined(_WIN32)
#define TFORGE_PLUGIN_EXPORT __declspec(dllexport)
#elif defined(__GNUC__)
#define TFORGE_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define TFORGE_PLUGIN_EXPORT
#endif

/* The name of the one symbol a plugin exports. A plugin defines it as
 *     TFORGE_PLUGIN_EXPORT const tforge_plugin_module TFORGE_PLUGIN_ENTRY_NAME = {...};
 * Building the same source with -DTFORGE_PLUGIN_ENTRY_NAME=other links several plugins into one
 * program, for static registration. */
#define TFORGE_PLUGIN_ENTRY_SYMBOL "tforge_plugin_entry"
#ifndef TFORGE_PLUGIN_ENTRY_NAME
#define TFORGE_PLUGIN_ENTRY_NAME tforge_plugin_entry
#endif

typedef struct tforge_abi_version {
    uint32_t major; /* another major: the host refuses the module */
    uint32_t minor; /* a newer minor only adds at the ends of tables */
    uint32_t revision;
} tforge_abi_version;

typedef enum tforge_plugin_kind {
    TFORGE_PLUGIN_TRANSFORM = 1, /* declares parameters and rewrites kernel source */
    TFORGE_PLUGIN_HEURISTIC = 2, /* turns profiling metrics into bottleneck labels and a prior */
    TFORGE_PLUGIN_LLM = 3,       /* proposes candidate rewrites */
    TFORGE_PLUGIN_COSTMODEL = 4, /* scores a measurement: latency, energy, analytical */
    TFORGE_PLUGIN_STRATEGY = 5,  /* proposes points of a space (ask/tell) */
    TFORGE_PLUGIN_PROFILER = 6   /* collects metrics of a kernel run */
} tforge_plugin_kind;

/* Codes a plugin returns for a failure: the same numbers as the host's TFORGE_E* codes. */
enum { TFORGE_PLUGIN_ERROR = -1, TFORGE_PLUGIN_ENOMEM = -2, TFORGE_PLUGIN_EINPUT = -3 };

/* Log levels a plugin passes to tforge_host.log; the same numbers as tforge_log_level. */
enum { TFORGE_PLUGIN_LOG_ERROR = 0, TFORGE_PLUGIN_LOG_WARN, TFORGE_PLUGIN_LOG_INFO,
       TFORGE_PLUGIN_LOG_DEBUG, TFORGE_PLUGIN_LOG_TRACE };

/* Services the host lends to plugins. Owned by the host, valid from init until deinit returns;
 * every function may be called from any thread. Grows only at the end. Every field here is of
 * ABI 1.0. */
typedef struct tforge_host {
    tforge_abi_version abi_version;
    uint32_t struct_size; /* sizeof the host's struct: fields past it do not exist */
    void *host_data;      /* the host's own; plugins never touch it */
    /* `message` is copied before the call returns. */
    void (*log)(const struct tforge_host *host, int level, const char *message);
    /* Records an error (a negative TFORGE_E* code and a message the host copies) as the host's
     * last error and returns `code`. */
    int (*error)(const struct tforge_host *host, int code, const char *message);
    /* The host's allocator, for memory that the host will free (or that crosses to it). */
    void *(*alloc)(const struct tforge_host *host, size_t size);
    void (*free)(const struct tforge_host *host, void *pointer);
} tforge_host;

/* The kinds of value an option takes. */
typedef enum tforge_option_type {
    TFORGE_OPTION_NUMBER = 1,  /* a finite number in [min, max] */
    TFORGE_OPTION_INTEGER = 2, /* an integer in [min, max] */
    TFORGE_OPTION_CHOICE = 3   /* one of the words of `choices` */
} tforge_option_type;

/* One setting a factory takes ("key=value" on the command line), published so that the host can
 * list it (`tforge plugins --options`), refuse a mistyped one before the plugin runs, and record
 * the effective value of every option, defaults included. Static memory of the plugin. */
typedef struct tforge_option_spec {
    const char *name;          /* an identifier: "t0", "acquisition" */
    uint32_t type;             /* a tforge_option_type */
    const char *default_value; /* as it would be given; "" when derived from the run (the doc
                                  says how) */
    double min, max;           /* NUMBER and INTEGER: the bounds */
    const char *choices;       /* CHOICE: the words, separated by '|': "auto|logei|ucb" */
    const char *doc;           /* one line */
} tforge_option_spec;

/* One factory. Lives in the plugin's static memory for as long as the module is loaded. */
typedef struct tforge_plugin_descriptor {
    uint32_t kind;            /* a tforge_plugin_kind */
    const char *id;           /* unique within its kind: "random", "bo", "cupti" */
    const char *version;      /* the factory's own version, "1.2.0" */
    const char *description;  /* one line for `tforge plugins` */
    const char *interface_id; /* names the layout of `interface`: "tforge.strategy/1" */
    const void *interface;    /* the kind's const function table */
    /* since 1.1: the options it takes (n_options of them; NULL when none) */
    const tforge_option_spec *options;
    uint32_t n_options;
    /* since 1.1, may be NULL: the interface table of that id ("tforge.strategy/1"), or NULL when
     * the factory does not speak it; lets one factory offer several revisions. Without it the
     * host uses `interface` when `interface_id` is the one it wants. */
    const void *(*get_interface)(const char *interface_id);
} tforge_plugin_descriptor;

/* The module's entry: a const object exported under the name TFORGE_PLUGIN_ENTRY_SYMBOL. */
typedef struct tforge_plugin_module {
    tforge_abi_version abi_version; /* TFORGE_PLUGIN_ABI_VERSION_INIT; must stay first */
    const char *name;               /* the module's name, for messages */
    /* Called once, before anything else of the module. `host` lives until deinit returns;
     * `path` is the module's file. Returns 0, or a negative code (the host then refuses the
     * module, and does not call deinit). May be NULL. */
    int (*init)(const tforge_host *host, const char *path);
    /* Called once, after the host is done with every factory. May be NULL. */
    void (*deinit)(void);
    uint32_t (*count)(void);                                    /* factories offered */
    const tforge_plugin_descriptor *(*get)(uint32_t index);     /* index < count() */
} tforge_plugin_module;

#ifdef __cplusplus
}
#endif
#endif
