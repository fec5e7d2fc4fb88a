// stoker's cache folder, shared by the sources' caches (shard summaries, folder listings):
// STOKER_CACHE_DIR, else $XDG_CACHE_HOME/stoker, else $HOME/.cache/stoker;
// STOKER_CACHE_DIR=none (or empty) turns caching off.
//
// Entries are per user: BASE/<uid>/<kind>/, the <uid> and <kind> folders created 0700. The
// base may be shared (a project folder, setgid with umask 002), so nothing in it is trusted
// that this user did not write: a folder of the user's path that is a link, owned by another
// user or writable by anyone else is refused, and an entry is read only when it is a regular
// file of this user's that no one else can write, opened without following a link and
// without waiting (O_NOFOLLOW | O_NONBLOCK: a FIFO planted at an entry's name is passed
// over, never waited on). What an entry says is still checked by its reader.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace stoker {

// The folder of one kind of entry ("shards", "folders") in this user's cache, or "" when
// caching is off or there is no home.
std::string cache_dir(const std::string& kind);

// The entry `name` of `kind`, when this user's folders and the entry pass the checks above;
// nullopt otherwise (none, refused, unreadable).
std::optional<std::string> read_cache_entry(const std::string& kind, const std::string& name);

// Keeps `text` as the entry `name` of `kind`: the user's folders created (0700) or checked,
// the text written to a mkstemp temporary beside the entry (names unique across hosts sharing
// the folder), then renamed over it (readers see the old entry or the new, whole). "" when
// kept or caching is off; else why not ("owned by uid 1001, not this user (1000)", ...).
std::string write_cache_entry(const std::string& kind, const std::string& name,
                              std::string_view text);

}  // namespace stoker
