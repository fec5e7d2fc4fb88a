// stoker's cache folder, shared by the sources' caches (shard summaries, folder listings):
// STOKER_CACHE_DIR, else $XDG_CACHE_HOME/stoker, else $HOME/.cache/stoker;
// STOKER_CACHE_DIR=none (or empty) turns caching off.
#pragma once

#include <string>

namespace stoker {

// The folder of one kind of entry ("shards", "folders") in the cache, or "" when caching is
// off or there is no home.
std::string cache_dir(const std::string& kind);

}  // namespace stoker
