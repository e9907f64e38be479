/* The plugin registry: modules loaded with dlopen or registered statically, their factories
 * looked up by kind and id, and the modules that were refused with the reason why. A kind is the
 * name of an interface id ("tforge.strategy" of "tforge.strategy/2"), so the registry knows no
 * list of kinds: a new kind is a new interface id. */
#ifndef TFORGE_ENGINE_REGISTRY_H
#define TFORGE_ENGINE_REGISTRY_H

#include "tforge/plugin/plugin.h"

#include <stddef.h>

typedef struct tforge_registry tforge_registry;

/* One factory; the strings belong to the registry (or the module) and live as long as it. */
typedef struct tforge_plugin_record {
    const tforge_plugin_descriptor *descriptor;
    const char *path;   /* the module's file, or "builtin:<name>" for a static one */
    const char *module; /* the module's name */
    uint32_t abi_minor; /* the ABI minor the module was built for: which fields it has */
    char kind[64];      /* its kind as listed: the interface id's name, "tforge." left out
                           ("strategy", "transform"; "acme.energy" for a kind from elsewhere) */
} tforge_plugin_record;

/* Whether the factory is of the kind `interface_id` names, at any revision of it. */
int tforge_plugin_is_kind(const tforge_plugin_record *record, const char *interface_id);

/* The options a factory publishes (NULL and 0 for a module older than ABI 1.1, or none). */
const tforge_option_spec *tforge_plugin_options(const tforge_plugin_record *record, uint32_t *n);

/* The factory's interface table of that id, or NULL when it does not speak it. */
const void *tforge_plugin_interface(const tforge_plugin_record *record, const char *interface_id);

/* Checks "key=value" options against the factory's published table before it runs: an unknown
 * key or a malformed value is TFORGE_EINPUT naming the factory, the key and what it takes. A
 * factory that publishes no table is left to check its own (0). */
int tforge_plugin_check_options(const tforge_plugin_record *record, const char *const *keys,
                                const char *const *values, uint32_t n);

/* The effective options as "key=value" texts: each published option with the value given, else
 * its default ("" for a derived one); then any given key the table does not list. Written into
 * `out` (NULL-terminated, at most `max` - 1 entries) as pointers into `buffer`. */
size_t tforge_plugin_effective_options(const char **out, size_t max, char *buffer, size_t size,
                                       const tforge_plugin_record *record,
                                       const char *const *keys, const char *const *values,
                                       uint32_t n);

typedef struct tforge_plugin_refusal {
    const char *path;
    const char *reason;
} tforge_plugin_refusal;

int tforge_registry_new(tforge_registry **out);
/* Calls every module's deinit, then unloads them. NULL is allowed. */
void tforge_registry_free(tforge_registry *registry);

/* Registers a module linked into the program (tests, built-ins). `origin` names it in listings. */
int tforge_registry_add_static(tforge_registry *registry, const tforge_plugin_module *module,
                               const char *origin);

/* Loads one shared object. A refused module is recorded (see tforge_registry_refusal) and the
 * call returns TFORGE_EABI or TFORGE_EINPUT with the same reason as the last error. */
int tforge_registry_load_file(tforge_registry *registry, const char *path);

/* Loads every `*.so` in the folder, in name order; refusals are recorded, never fatal. A folder
 * that does not exist is skipped (returns 0). */
int tforge_registry_load_dir(tforge_registry *registry, const char *dir);

/* The search path, in order: each of `dirs`, each entry of TFORGE_PLUGIN_PATH (colon-separated;
 * empty entries are skipped, so the current folder is never searched unless named), then the
 * installed plugin folder beside the executable (`<prefix>/lib/tforge/plugins`). */
int tforge_registry_load_search_path(tforge_registry *registry, const char *const *dirs,
                                     size_t n_dirs);

/* The installed plugin folder for this executable, or NULL when it cannot be found. */
const char *tforge_registry_installed_dir(void);

size_t tforge_registry_count(const tforge_registry *registry);
const tforge_plugin_record *tforge_registry_at(const tforge_registry *registry, size_t index);
size_t tforge_registry_refusal_count(const tforge_registry *registry);
const tforge_plugin_refusal *tforge_registry_refusal(const tforge_registry *registry, size_t index);

/* The factory `id` of the kind `interface_id` names that speaks that revision of it, or NULL
 * with the last error TFORGE_ENOTFOUND (no such factory) or TFORGE_EINPUT (one that speaks only
 * another revision: the message names both). */
const tforge_plugin_record *tforge_registry_find(const tforge_registry *registry,
                                                 const char *interface_id, const char *id);

/* The host services table every module is given. */
const tforge_host *tforge_registry_host(void);

#endif
