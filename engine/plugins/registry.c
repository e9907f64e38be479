#include "registry.h"

#include "install.h"

#include "grow.h"
#include "tforge/cpu.h"
#include "tforge/error.h"
#include "tforge/log.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct module {
    void *handle; /* NULL for a static module */
    const tforge_plugin_module *entry;
    char *path;
} module;

struct tforge_registry {
    module *modules;
    size_t n_modules, cap_modules;
    tforge_plugin_record *records;
    size_t n_records, cap_records;
    tforge_plugin_refusal *refusals;
    size_t n_refusals, cap_refusals;
};

/* The length of an interface id's name, the kind: what comes before its '/'; 0 when the id is
 * not "<kind>/<revision>". */
static size_t kind_length(const char *interface_id)
{
    const char *slash = strrchr(interface_id, '/');
    return slash && slash > interface_id && slash[1] ? (size_t)(slash - interface_id) : 0;
}

/* Whether two interface ids name one kind, at any revisions. */
static int same_kind(const char *a, const char *b)
{
    size_t n = kind_length(a);
    return n && kind_length(b) == n && strncmp(a, b, n) == 0;
}

int tforge_plugin_is_kind(const tforge_plugin_record *record, const char *interface_id)
{
    return same_kind(record->descriptor->interface_id, interface_id);
}

/* The kind as listed: the interface id's name without the "tforge." of the shipped kinds. */
static void kind_name(char *out, size_t size, const char *interface_id)
{
    size_t n = kind_length(interface_id), skip = 0;
    if (n > 7 && strncmp(interface_id, "tforge.", 7) == 0)
        skip = 7;
    snprintf(out, size, "%.*s", (int)(n - skip), interface_id + skip);
}

/* ---- the host services table ---- */

static void host_log(const tforge_host *host, int level, const char *message)
{
    (void)host;
    if (level < TFORGE_LOG_ERROR)
        level = TFORGE_LOG_ERROR;
    if (level > TFORGE_LOG_TRACE)
        level = TFORGE_LOG_TRACE;
    tforge_log((tforge_log_level)level, "%s", message ? message : "");
}

static int host_error(const tforge_host *host, int code, const char *message)
{
    (void)host;
    return tforge_error_set(code < 0 ? code : TFORGE_ERROR, "%s", message ? message : "");
}

static void *host_alloc(const tforge_host *host, size_t size)
{
    (void)host;
    return malloc(size);
}

static void host_free(const tforge_host *host, void *pointer)
{
    (void)host;
    free(pointer);
}

static const tforge_host the_host = {
    TFORGE_PLUGIN_ABI_VERSION_INIT, sizeof(tforge_host), NULL, host_log, host_error,
    host_alloc,                     host_free,
};

const tforge_host *tforge_registry_host(void)
{
    return &the_host;
}

int tforge_registry_new(tforge_registry **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? 0 : tforge_error_set(TFORGE_ENOMEM, "out of memory creating the registry");
}

void tforge_registry_free(tforge_registry *registry)
{
    if (!registry)
        return;
    for (size_t i = registry->n_modules; i-- > 0;) {
        module *m = &registry->modules[i];
        if (m->entry->deinit)
            m->entry->deinit();
        if (m->handle)
            dlclose(m->handle);
        free(m->path);
    }
    for (size_t i = 0; i < registry->n_refusals; i++) {
        free((char *)registry->refusals[i].path);
        free((char *)registry->refusals[i].reason);
    }
    free(registry->modules);
    free(registry->records);
    free(registry->refusals);
    free(registry);
}

/* Records the refusal, logs it, and returns `code` with the reason as the last error. */
static int refuse(tforge_registry *registry, int code, const char *path, const char *reason)
{
    char *p = strdup(path), *r = strdup(reason);
    if (!p || !r || tforge_grow((void **)&registry->refusals, &registry->cap_refusals,
                                registry->n_refusals, sizeof *registry->refusals, "refusals")) {
        free(p);
        free(r);
        return tforge_error_set(TFORGE_ENOMEM, "out of memory in the plugin registry");
    }
    registry->refusals[registry->n_refusals++] = (tforge_plugin_refusal){p, r};
    tforge_log(TFORGE_LOG_INFO, "plugin %s refused: %s", path, reason);
    return tforge_error_set(code, "plugin %s refused: %s", path, reason);
}

const tforge_plugin_record *tforge_registry_find(const tforge_registry *registry,
                                                 const char *interface_id, const char *id)
{
    for (size_t i = 0; i < registry->n_records; i++) {
        const tforge_plugin_record *r = &registry->records[i];
        if (!tforge_plugin_is_kind(r, interface_id) || strcmp(r->descriptor->id, id) != 0)
            continue;
        if (tforge_plugin_interface(r, interface_id))
            return r;
        tforge_error_set(TFORGE_EINPUT, "%s plugin '%s' (%s) speaks %s, this tforge speaks %s",
                         r->kind, id, r->path, r->descriptor->interface_id, interface_id);
        return NULL;
    }
    char name[64];
    kind_name(name, sizeof name, interface_id);
    tforge_error_set(TFORGE_ENOTFOUND, "no %s plugin with id '%s' (see `tforge plugins`)", name,
                     id);
    return NULL;
}

/* Checks the module's factories: well-formed, and no id taken already (in the registry or
 * earlier in the same module). Writes the reason into `reason` and returns nonzero on failure. */
static int check_descriptors(const tforge_registry *registry, const tforge_plugin_module *entry,
                             char *reason, size_t size)
{
    uint32_t n = entry->count();
    for (uint32_t i = 0; i < n; i++) {
        const tforge_plugin_descriptor *d = entry->get(i);
        if (!d || !d->id || !d->id[0] || !d->version || !d->interface_id || !d->interface) {
            snprintf(reason, size, "factory %u has a missing id, version, interface id or "
                                   "interface", i);
            return 1;
        }
        char kind[64];
        kind_name(kind, sizeof kind, d->interface_id);
        if (!kind[0] || kind_length(d->interface_id) >= sizeof kind) {
            snprintf(reason, size, "factory '%s': interface id '%s' is not <kind>/<revision> "
                                   "(a kind of at most %zu characters)", d->id, d->interface_id,
                     sizeof kind - 1);
            return 1;
        }
        for (size_t r = 0; r < registry->n_records; r++) {
            const tforge_plugin_record *other = &registry->records[r];
            if (same_kind(other->descriptor->interface_id, d->interface_id) &&
                strcmp(other->descriptor->id, d->id) == 0) {
                snprintf(reason, size, "duplicate id: %s '%s' is already provided by %s", kind,
                         d->id, other->path);
                return 1;
            }
        }
        for (uint32_t j = 0; j < i; j++) {
            const tforge_plugin_descriptor *e = entry->get(j);
            if (same_kind(e->interface_id, d->interface_id) && strcmp(e->id, d->id) == 0) {
                snprintf(reason, size, "duplicate id: %s '%s' appears twice in the module", kind,
                         d->id);
                return 1;
            }
        }
    }
    return 0;
}

/* Checks, initialises and registers a module. `handle` is closed on refusal. */
static int admit(tforge_registry *registry, void *handle, const tforge_plugin_module *entry,
                 const char *path)
{
    char reason[512];
    int code = TFORGE_EINPUT;
    if (entry->abi_version.major != TFORGE_PLUGIN_ABI_MAJOR) {
        snprintf(reason, sizeof reason, "built for plugin ABI %u.%u, this tforge speaks ABI %u.x",
                 entry->abi_version.major, entry->abi_version.minor, TFORGE_PLUGIN_ABI_MAJOR);
        code = TFORGE_EABI;
        goto refused;
    }
    if (!entry->count || !entry->get) {
        snprintf(reason, sizeof reason, "its entry has no count or get function");
        goto refused;
    }
    if (entry->init) {
        tforge_error_clear();
        int rc = entry->init(&the_host, path);
        if (rc != 0) {
            const char *why = tforge_error_last()->message;
            snprintf(reason, sizeof reason, "its init failed (%d)%s%s", rc, why[0] ? ": " : "",
                     why);
            goto refused;
        }
    }
    if (check_descriptors(registry, entry, reason, sizeof reason)) {
        if (entry->deinit)
            entry->deinit();
        goto refused;
    }
    char *owned = strdup(path);
    uint32_t n = entry->count();
    if (!owned || tforge_grow((void **)&registry->modules, &registry->cap_modules,
                              registry->n_modules, sizeof *registry->modules, "plugin registry")) {
        free(owned);
        if (entry->deinit)
            entry->deinit();
        if (handle)
            dlclose(handle);
        return tforge_error_set(TFORGE_ENOMEM, "out of memory loading %s", path);
    }
    registry->modules[registry->n_modules++] = (module){handle, entry, owned};
    for (uint32_t i = 0; i < n; i++) {
        if (tforge_grow((void **)&registry->records, &registry->cap_records,
                        registry->n_records, sizeof *registry->records, "plugin registry"))
            return TFORGE_ENOMEM;
        tforge_plugin_record *r = &registry->records[registry->n_records++];
        *r = (tforge_plugin_record){entry->get(i), owned, entry->name ? entry->name : owned,
                                    entry->abi_version.minor, ""};
        kind_name(r->kind, sizeof r->kind, r->descriptor->interface_id);
    }
    tforge_log(TFORGE_LOG_DEBUG, "plugin %s loaded: %u factories", path, n);
    return 0;

refused:
    if (handle)
        dlclose(handle);
    return refuse(registry, code, path, reason);
}

int tforge_registry_add_static(tforge_registry *registry, const tforge_plugin_module *module,
                               const char *origin)
{
    return admit(registry, NULL, module, origin);
}

int tforge_registry_load_file(tforge_registry *registry, const char *path)
{
    for (size_t i = 0; i < registry->n_modules; i++)
        if (strcmp(registry->modules[i].path, path) == 0)
            return 0; /* the same file reached twice through the search path */
    dlerror();
    /* For this module's libraries only: the engine's Python workers keep their own choice.
     * (Plugins are loaded before the engine starts any thread, so the environment is safe to
     * change here.) */
    int set = tforge_cpu_prepare_openblas();
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    tforge_cpu_unset_openblas(set);
    if (!handle) {
        char why[512];
        const char *detail = dlerror();
        snprintf(why, sizeof why, "not a loadable shared object (%s)", detail ? detail : "?");
        return refuse(registry, TFORGE_EINPUT, path, why);
    }
    const tforge_plugin_module *entry = dlsym(handle, TFORGE_PLUGIN_ENTRY_SYMBOL);
    if (!entry) {
        dlclose(handle);
        return refuse(registry, TFORGE_EINPUT, path,
                      "it exports no '" TFORGE_PLUGIN_ENTRY_SYMBOL "' symbol");
    }
    return admit(registry, handle, entry, path);
}

static int ends_with_so(const char *name)
{
    size_t n = strlen(name);
    return n > 3 && strcmp(name + n - 3, ".so") == 0;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int tforge_registry_load_dir(tforge_registry *registry, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (!ends_with_so(e->d_name))
            continue;
        if ((rc = tforge_grow((void **)&names, &cap, n, sizeof *names, "listing plugins")))
            goto cleanup;
        if (!(names[n] = strdup(e->d_name))) {
            rc = tforge_error_set(TFORGE_ENOMEM, "out of memory listing %s", dir);
            goto cleanup;
        }
        n++;
    }
    qsort(names, n, sizeof *names, compare_names);
    for (size_t i = 0; i < n; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        char resolved[PATH_MAX];
        int load = tforge_registry_load_file(registry, realpath(path, resolved) ? resolved : path);
        if (load == TFORGE_ENOMEM) {
            rc = load;
            goto cleanup;
        }
    }
cleanup:
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    closedir(d);
    return rc;
}

const char *tforge_registry_installed_dir(void)
{
    static char dir[PATH_MAX + 64];
    return tforge_install_dir(dir, sizeof dir, TFORGE_PLUGIN_RELDIR) == 0 ? dir : NULL;
}

int tforge_registry_load_search_path(tforge_registry *registry, const char *const *dirs,
                                     size_t n_dirs)
{
    int rc;
    for (size_t i = 0; i < n_dirs; i++)
        if ((rc = tforge_registry_load_dir(registry, dirs[i])))
            return rc;
    const char *env = getenv("TFORGE_PLUGIN_PATH");
    if (env) {
        char *copy = strdup(env), *save = NULL;
        if (!copy)
            return tforge_error_set(TFORGE_ENOMEM, "out of memory reading TFORGE_PLUGIN_PATH");
        /* strtok_r skips empty entries, which POSIX would read as the current folder. */
        for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save))
            if ((rc = tforge_registry_load_dir(registry, dir))) {
                free(copy);
                return rc;
            }
        free(copy);
    }
    const char *installed = tforge_registry_installed_dir();
    return installed ? tforge_registry_load_dir(registry, installed) : 0;
}

size_t tforge_registry_count(const tforge_registry *registry)
{
    return registry->n_records;
}

const tforge_plugin_record *tforge_registry_at(const tforge_registry *registry, size_t index)
{
    return index < registry->n_records ? &registry->records[index] : NULL;
}

size_t tforge_registry_refusal_count(const tforge_registry *registry)
{
    return registry->n_refusals;
}

const tforge_plugin_refusal *tforge_registry_refusal(const tforge_registry *registry, size_t index)
{
    return index < registry->n_refusals ? &registry->refusals[index] : NULL;
}

const tforge_option_spec *tforge_plugin_options(const tforge_plugin_record *r, uint32_t *n)
{
    *n = 0;
    if (r->abi_minor < 1 || !r->descriptor->options)
        return NULL;
    *n = r->descriptor->n_options;
    return r->descriptor->options;
}

const void *tforge_plugin_interface(const tforge_plugin_record *r, const char *interface_id)
{
    if (r->abi_minor >= 1 && r->descriptor->get_interface)
        return r->descriptor->get_interface(interface_id);
    return strcmp(r->descriptor->interface_id, interface_id) == 0 ? r->descriptor->interface
                                                                  : NULL;
}

static const tforge_option_spec *find_spec(const tforge_option_spec *specs, uint32_t n,
                                           const char *name)
{
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(specs[i].name, name) == 0)
            return &specs[i];
    return NULL;
}

/* Whether `word` is one of the '|'-separated `choices`. */
static int is_choice(const char *choices, const char *word)
{
    size_t len = strlen(word);
    for (const char *c = choices; c && *c;) {
        const char *bar = strchr(c, '|');
        size_t n = bar ? (size_t)(bar - c) : strlen(c);
        if (n == len && strncmp(c, word, n) == 0)
            return 1;
        c = bar ? bar + 1 : c + n;
    }
    return 0;
}

static int check_value(const tforge_plugin_record *r, const tforge_option_spec *o,
                       const char *text)
{
    const char *id = r->descriptor->id, *kind = r->kind;
    if (o->type == TFORGE_OPTION_TEXT)
        return 0;
    if (o->type == TFORGE_OPTION_CHOICE) {
        if (is_choice(o->choices, text))
            return 0;
        return tforge_error_set(TFORGE_EINPUT, "%s %s: option %s is '%s', expected one of %s",
                                kind, id, o->name, text, o->choices);
    }
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end != text && !*end && isfinite(v) && v >= o->min && v <= o->max &&
        (o->type != TFORGE_OPTION_INTEGER || v == floor(v)))
        return 0;
    return tforge_error_set(TFORGE_EINPUT, "%s %s: option %s is '%s', expected %s in [%g, %g]",
                            kind, id, o->name, text,
                            o->type == TFORGE_OPTION_INTEGER ? "an integer" : "a number", o->min,
                            o->max);
}

int tforge_plugin_check_options(const tforge_plugin_record *r, const char *const *keys,
                                const char *const *values, uint32_t n)
{
    uint32_t n_specs;
    const tforge_option_spec *specs = tforge_plugin_options(r, &n_specs);
    if (!specs && n_specs == 0 && r->abi_minor < 1)
        return 0;
    for (uint32_t i = 0; i < n; i++) {
        const tforge_option_spec *o = find_spec(specs, n_specs, keys[i]);
        if (!o) {
            char known[512] = "";
            size_t used = 0;
            for (uint32_t j = 0; j < n_specs && used < sizeof known; j++)
                used += (size_t)snprintf(known + used, sizeof known - used, "%s%s",
                                         j ? ", " : "", specs[j].name);
            return tforge_error_set(TFORGE_EINPUT, "%s %s has no option '%s' (%s%s; see `tforge "
                                    "plugins --options`)", r->kind, r->descriptor->id, keys[i],
                                    n_specs ? "it takes " : "it takes none", known);
        }
        int rc = check_value(r, o, values[i]);
        if (rc)
            return rc;
    }
    return 0;
}

size_t tforge_plugin_effective_options(const char **out, size_t max, char *buffer, size_t size,
                                       const tforge_plugin_record *r, const char *const *keys,
                                       const char *const *values, uint32_t n)
{
    uint32_t n_specs;
    const tforge_option_spec *specs = tforge_plugin_options(r, &n_specs);
    size_t k = 0, used = 0;
    for (uint32_t i = 0; i < n_specs + n && k + 1 < max; i++) {
        const char *name = i < n_specs ? specs[i].name : keys[i - n_specs];
        const char *value = i < n_specs ? specs[i].default_value : values[i - n_specs];
        for (uint32_t j = 0; j < n && i < n_specs; j++)
            if (strcmp(keys[j], name) == 0)
                value = values[j];
        if (i >= n_specs && find_spec(specs, n_specs, name))
            continue; /* listed above with its table entry */
        int w = snprintf(buffer + used, size - used, "%s=%s", name, value ? value : "");
        if (w < 0 || (size_t)w >= size - used)
            break;
        out[k++] = buffer + used;
        used += (size_t)w + 1;
    }
    out[k] = NULL;
    return k;
}
