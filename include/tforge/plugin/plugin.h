/* The TritonForge plugin ABI, version 1.3: what a plugin author includes, and nothing else.
 *
 * A plugin is a shared object that exports one symbol, `tforge_plugin_entry`, of type
 * `tforge_plugin_module`. Its first field is the ABI version: the host reads it before running
 * any of the plugin's code and refuses a module of another major version. A module then offers
 * any number of factories, each looked up by its kind and a string id; what a factory can do is
 * the interface table it points to, named by `interface_id` ("tforge.strategy/2"). The kind is
 * that id's name, the text before the '/' ("tforge.strategy"), and the number after it the
 * revision: a new kind (a cost model, an LLM backend, one of a plugin's own) is a new id, and
 * needs no change to this header or to the host's registry. Every kind's create begins the same
 * way, `create(void **state, const tforge_host *host, const tforge_options_view *options, ...)`,
 * the kind's own inputs (a struct of its header) after them.
 *
 * Rules that keep the layout stable: structs shipped in a release never change; tables only grow
 * at the end, and each field past 1.0 says the ABI minor that added it ("since 1.1"): the host
 * reads such a field of a plugin's struct only when the module declares that minor or a later
 * one, and a plugin checks the host table's `struct_size` before using a newer host field. A
 * table or struct whose layout must change otherwise is a new one under a new name, and its
 * interface id a new revision ("tforge.strategy/1" became "/2" in 1.3): the host asks each
 * factory for the revision it speaks (get_interface) and refuses, by name, one that speaks only
 * an older one. Memory is freed by whoever allocated it, never across the dlopen boundary.
 *
 * The types every kind shares (levels, statuses, the space view, observations, measurements) are
 * in types.h; each kind's interface in a header of its own: strategy.h (ask/tell), transform.h
 * (source rewrites, over the analysis IR of ir.h), profiler.h and heuristic.h (over the profiles
 * of profile.h), costmodel.h (objectives and bounds) and llm.h (a model's transport). ABI 1.2
 * added set_level_prior to strategies; ABI 1.3 made kinds open (the interface id) and gave every
 * create the options view and the host (strategy/2, transform/5, heuristic/2, profiler/2,
 * costmodel/1, llm/1), and told what a dimension is (its owner and effect, types.h) to the space
 * view and to a transform's parameters. `sdk/` (installed beside these headers as tforge/sdk/)
 * holds the helpers in-tree plugins use, so an out-of-tree one copies nothing.
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
    TFORGE_OPTION_CHOICE = 3,  /* one of the words of `choices` */
    /* any text, `choices` unused: an endpoint's address, a model's name (since 1.3, for llm/1;
     * an older host refuses the option as not a number, never passes it unchecked) */
    TFORGE_OPTION_TEXT = 4
} tforge_option_type;

/* The options a factory is created with, "key" = "value" texts in the order given (checked by
 * the host against the factory's published table first, when it publishes one). Lent for the
 * call of create: a plugin copies what it keeps. Of ABI 1.3. */
typedef struct tforge_options_view {
    uint32_t struct_size;
    uint32_t count;
    const char *const *keys;   /* count of them */
    const char *const *values; /* count of them */
} tforge_options_view;

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
    /* 0. Up to ABI 1.2 a number from a closed list of kinds; the host no longer reads it: the
     * kind is the name of `interface_id`. */
    uint32_t reserved;
    const char *id;           /* unique within its kind: "random", "bo", "cupti" */
    const char *version;      /* the factory's own version, "1.2.0" */
    const char *description;  /* one line for `tforge plugins` */
    /* names the layout of `interface` and the factory's kind: "<kind>/<revision>",
     * "tforge.strategy/2" */
    const char *interface_id;
    const void *interface;    /* the kind's const function table */
    /* since 1.1: the options it takes (n_options of them; NULL when none) */
    const tforge_option_spec *options;
    uint32_t n_options;
    /* since 1.1, may be NULL: the interface table of that id ("tforge.strategy/2"), or NULL when
     * the factory does not speak it; lets one factory offer several revisions of its kind.
     * Without it the host uses `interface` when `interface_id` is the one it wants. */
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
