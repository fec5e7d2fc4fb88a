// The sampler across the C interface (stoker.DistributedSampler keeps its permutation, shard
// rule and elastic resume in C++), the world, and the pieces of the epoch agreement that the
// Python layer's torch.distributed path shares with MPI's.
#include <chrono>

#include "capi.hpp"
#include "capi_objects.hpp"
#include "capi_state.hpp"
#include "stoker/common/error.hpp"
#include "stoker/distributed/agreement.hpp"
#include "stoker/distributed/shared_listing.hpp"
#include "stoker/distributed/world.hpp"

namespace stoker::capi {

namespace {

DistributedSampler& sampler(const Call& c) {
  return c.object<SamplerObject>(0, "a sampler").sampler;
}

void new_sampler(const Call& c, Result& r) {
  SamplerOptions o;
  o.size = c.at("size").get<uint64_t>();
  o.world_size = c.at("world_size").get<uint64_t>();
  o.rank = c.at("rank").get<uint64_t>();
  o.shuffle = c.at("shuffle").get<bool>();
  o.seed = c.at("seed").get<uint64_t>();
  o.drop_last = c.at("drop_last").get<bool>();
  o.fingerprint = c.args.value("fingerprint", uint64_t{0});
  o.ra_reps = c.args.value("ra_reps", uint64_t{1});
  r.object = std::make_unique<SamplerObject>(DistributedSampler(o));
}

void world_call(const Call&, Result& r) {
  const World w = detect_world();
  r.value = {{"rank", w.rank},
             {"world_size", w.world_size},
             {"local_rank", w.local_rank},
             {"local_size", w.local_size},
             {"mpi", w.mpi},
             {"source", w.source}};
}

void check_views(const Call& c, Result&) {
  std::vector<EpochView> views;
  for (const json& words : c.at("views")) {
    const auto w = words.get<std::vector<uint64_t>>();
    views.push_back(view_from_words(w));
  }
  check_epoch_views(
      views, c.at("seeds_must_match").get<bool>() ? SeedRule::must_match : SeedRule::take_rank0);
}

}  // namespace

Calls sampler_calls() {
  return {
      {"sampler_new", new_sampler},
      {"sampler_copy",
       [](const Call& c, Result& r) { r.object = std::make_unique<SamplerObject>(sampler(c)); }},
      {"sampler_set_epoch",
       [](const Call& c, Result&) { sampler(c).set_epoch(c.at("epoch").get<uint64_t>()); }},
      {"sampler_info",
       [](const Call& c, Result& r) {
         const DistributedSampler& s = sampler(c);
         r.value = {{"epoch", s.epoch()},
                    {"length", s.length()},
                    {"start", s.start()},
                    {"seed", s.options().seed},
                    {"fingerprint", s.options().fingerprint}};
       }},
      {"sampler_order",
       [](const Call& c, Result& r) {
         r.value = sampler(c).order(c.at("position").get<uint64_t>());
       }},
      {"sampler_state",
       [](const Call& c, Result& r) {
         r.value = state_dict(sampler(c).state(c.at("local_consumed").get<uint64_t>()));
       }},
      {"sampler_restore",
       [](const Call& c, Result&) {
         sampler(c).restore(parse_state(c.at("text").get<std::string>()));
       }},
      {"sampler_view",
       [](const Call& c, Result& r) {
         const DistributedSampler& s = sampler(c);
         r.value = to_words(epoch_view(s.options(), s.epoch(), c.at("comm_rank").get<uint64_t>()));
       }},
      {"sampler_agree_mpi",
       [](const Call& c, Result& r) {
         const DistributedSampler& s = sampler(c);
         r.value = agree_on_epoch(s.options(), s.epoch());
       }},
      {"world", world_call},
      {"seed_from_environment",
       [](const Call& c, Result& r) {
         r.value = seed_from_environment(c.at("fallback").get<uint64_t>());
       }},
      {"check_epoch_views", check_views},
      {"agree_wait",
       [](const Call&, Result& r) {
         const AgreeWait w = agree_wait_from_environment();
         r.value = {w.warn.count(), w.timeout.count()};
       }},
      {"agree_waiting_line",
       [](const Call& c, Result& r) {
         r.value = agree_waiting_line(c.at("rank").get<uint64_t>(), c.at("epoch").get<uint64_t>(),
                                      c.at("missing").get<std::string>(),
                                      std::chrono::seconds(c.at("waited").get<int64_t>()),
                                      agree_wait_from_environment());
       }},
      {"agree_timeout_text",
       [](const Call& c, Result& r) {
         r.value =
             agree_timeout_text(c.at("epoch").get<uint64_t>(), c.at("missing").get<std::string>(),
                                agree_wait_from_environment());
       }},
      {"listing_waiting_line",
       [](const Call& c, Result& r) {
         r.value = listing_waiting_line(c.at("rank").get<uint64_t>(), c.path("root"),
                                        std::chrono::seconds(c.at("waited").get<int64_t>()),
                                        agree_wait_from_environment());
       }},
      {"listing_timeout_text",
       [](const Call& c, Result& r) {
         r.value = listing_timeout_text(c.path("root"), agree_wait_from_environment());
       }},
      {"rank_list",
       [](const Call& c, Result& r) {
         r.value = rank_list(c.at("ranks").get<std::vector<uint64_t>>());
       }},
      {"note_unchecked_ranks",
       [](const Call& c, Result& r) {
         r.value =
             note_unchecked_ranks(c.at("rank").get<uint64_t>(), c.at("world_size").get<uint64_t>());
       }},
  };
}

}  // namespace stoker::capi
