// One listing of an image folder per job, not one per rank. Rank 0 lists the
// folder (or reads its listing from STOKER_CACHE_DIR) and sends the source's index
// (ImageFolderSource::index) to the others, which take it (from_index) without a stat, an
// open or a readdir of the folder's files: when 512 ranks start, the metadata server sees
// one listing, not 512. Over MPI (a broadcast on stoker's own communicator), here; over
// torch.distributed's store, by the Python module (stoker/_listing_share.py), with the same
// message and the same texts.
//
// Each node still checks its own files: node-local copies staged per node may differ from
// rank 0's, and rank 0's fingerprint alone would let them pass. The first rank of each node
// but rank 0's (checks_node_copy) reads the files rank 0's content sample read, and compares
// (node_copy_problem); then every rank learns the first problem any rank found (a transport's
// second exchange) and throws node_copy_error with it, none left waiting.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "stoker/common/error.hpp"
#include "stoker/sources/image_source.hpp"

namespace stoker {

// The image folder `root` for a loader of `world_size` ranks that checks its ranks (`agree`):
// shared over MPI when this process's world is MPI's and world_size > 1 (the loader's start is
// collective then anyway); else listed here, as ImageFolderSource(root). Collective in the first
// case: it waits for rank 0 as the epoch agreement waits (a note from rank 1 every
// STOKER_AGREE_WARN seconds, MPI_Abort after STOKER_AGREE_TIMEOUT). Throws as list_and_share and
// take_shared_listing below.
std::shared_ptr<const ImageFolderSource> open_image_folder(const std::string& root,
                                                           uint64_t world_size, bool agree);

// Rank 0's side, whatever the transport: lists `root` and gives send() the message for the
// others ("ok\n" + the index, which carries the content sample's hashes). When the folder
// cannot be listed, send() gets "error\n" + the error's text (any exception's: a bad_alloc
// too), and the exception is rethrown here.
std::shared_ptr<const ImageFolderSource> list_and_share(
    const std::string& root, const std::function<void(const std::string&)>& send);

// Rank 0's message when something before the listing failed on it (`what`).
std::string shared_listing_error(const std::string& what);

// Another rank's side: the source from rank 0's `message`. Throws stoker::Error naming
// rank 0's error when it could not list the folder. A message this rank cannot take (rank 0
// was given another root, or runs another stoker version) is one line on stderr naming why,
// and this rank lists `root` itself: the epoch agreement then compares the datasets.
std::shared_ptr<const ImageFolderSource> take_shared_listing(const std::string& root,
                                                             std::string_view message,
                                                             uint64_t rank);

// Whether this rank checks its node's copy (the first rank of a node other than rank 0's):
// local rank 0, and not rank 0.
bool checks_node_copy(uint64_t rank, uint64_t local_rank);

// A checking rank's verdict on the source take_shared_listing gave it: "" when this node's
// files give rank 0's content sample (or the rank listed the folder itself), else "the copy
// on NODE is not rank 0's: ROOT/c1/x.jpg: differs in size or content" (or why it cannot be
// read). Costs what rank 0's sample cost: up to 1024 opens and 2048 reads of 4 KiB, no stat.
std::string node_copy_problem(const ImageFolderSource& taken);

// The error every rank throws once a rank's problem is known (a node's verdict, or a rank's
// own take_shared_listing error prefixed with its node): names `root`, the problem, and what
// to do.
Error node_copy_error(const std::string& root, const std::string& problem);

}  // namespace stoker
