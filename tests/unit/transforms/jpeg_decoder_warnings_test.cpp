// JPEGs libjpeg-turbo decodes with warnings only are delivered, as djpeg and PIL deliver
// them, and counted on the decoding thread; only data that stops before the image's end is
// an error, as in PIL (LOAD_TRUNCATED_IMAGES off: "image file is truncated"). Each damaged
// file here is made the way the real ones in docs/reliability.md's table are damaged.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "image_fixtures.hpp"
#include "stoker/transforms/decode_warnings.hpp"
#include "transforms/image_decoder.hpp"

namespace stoker {
namespace {

std::vector<std::byte> baseline_jpeg() {
  return encode_jpeg(synthetic_image(96, 64, 3), 96, 64, 90);
}

size_t find_marker(const std::vector<std::byte>& jpeg, unsigned char marker) {
  for (size_t i = 2; i + 1 < jpeg.size(); ++i) {
    if (jpeg[i] == std::byte{0xff} && jpeg[i + 1] == std::byte{marker}) return i;
  }
  ADD_FAILURE() << "no marker 0x" << std::hex << int{marker};
  return 0;
}

// Decodes `jpeg` whole and returns how many warned images the thread counted meanwhile.
uint64_t warned_images(const std::vector<std::byte>& jpeg, std::string* warning = nullptr) {
  const uint64_t before = decode_warnings_on_this_thread().images;
  ImageDecoder dec;
  std::vector<std::byte> buf;
  const DecodedRegion r = dec.decode_full(jpeg, buf);
  EXPECT_EQ(r.w, 96);
  EXPECT_EQ(r.h, 64);
  if (warning != nullptr) *warning = decode_warnings_on_this_thread().last;
  return decode_warnings_on_this_thread().images - before;
}

TEST(FaultsJpegWarnings, ExtraneousBytesBeforeAMarkerAreDecodedAndCounted) {
  std::vector<std::byte> jpeg = baseline_jpeg();
  const size_t dqt = find_marker(jpeg, 0xdb);
  jpeg.insert(jpeg.begin() + static_cast<std::ptrdiff_t>(dqt), 3, std::byte{0});
  std::string warning;
  EXPECT_EQ(warned_images(jpeg, &warning), 1u);
  EXPECT_NE(warning.find("extraneous bytes before marker 0xdb"), std::string::npos) << warning;
}

TEST(FaultsJpegWarnings, ScanDataCutShortBeforeTheEndMarkerIsDecodedAsPilDoes) {
  // "Premature end of data segment": the rows past the cut are grey, as in PIL.
  std::vector<std::byte> jpeg = baseline_jpeg();
  jpeg.resize(jpeg.size() * 2 / 3);
  jpeg.push_back(std::byte{0xff});
  jpeg.push_back(std::byte{0xd9});
  EXPECT_EQ(warned_images(jpeg), 1u);
}

TEST(FaultsJpegWarnings, ARegionOfAWarnedJpegEqualsItsFullDecode) {
  // A warned image is read on to its end marker (as PIL reads): a region above the damage
  // still comes out as the full decode has it.
  std::vector<std::byte> jpeg = baseline_jpeg();
  jpeg.resize(jpeg.size() * 2 / 3);
  jpeg.push_back(std::byte{0xff});
  jpeg.push_back(std::byte{0xd9});
  ImageDecoder full_dec, region_dec;
  std::vector<std::byte> full_buf, region_buf;
  const DecodedRegion full = full_dec.decode_full(jpeg, full_buf);
  region_dec.begin(jpeg);
  const DecodedRegion r = region_dec.decode(1, {8, 4, 40, 16}, region_buf);
  for (int y = 4; y < 20; ++y) {
    EXPECT_EQ(std::memcmp(r.pixel(8, y), full.pixel(8, y), 40 * 3), 0) << "row " << y;
  }
}

// A stray APP1 or COM marker inside the entropy-coded data (the crash-test files of a
// corpus, with Adobe markers): libjpeg stops the scan there, fills the rest in, then reads on
// for the end marker, takes the bytes after the stray marker for its segment's length, and
// runs off the file's end ("Premature end of JPEG file"). Every row was decoded by then: PIL
// delivers the image, and so does stoker (counted as warned). Data that ends before the
// last row stays an error (DataEndingBeforeTheEndMarkerIsTruncatedAsInPil).
TEST(FaultsJpegWarnings, AStrayMarkerInTheScanIsDecodedAsPilDoesNotCalledTruncated) {
  const std::vector<std::byte> clean = baseline_jpeg();
  const size_t sos = find_marker(clean, 0xda);
  for (const unsigned char marker : {0xe1, 0xfe}) {
    std::vector<std::byte> jpeg = clean;
    size_t at = sos + (jpeg.size() - sos) / 2;
    while (jpeg[at - 1] == std::byte{0xff}) ++at;  // not inside a stuffed 0xff 0x00
    jpeg.insert(jpeg.begin() + static_cast<std::ptrdiff_t>(at),
                {std::byte{0xff}, std::byte{marker}});
    std::string warning;
    EXPECT_EQ(warned_images(jpeg, &warning), 1u) << "marker 0x" << std::hex << int{marker};
    EXPECT_FALSE(warning.empty());
  }
}

TEST(FaultsJpegWarnings, AnIntactJpegCountsNoWarning) {
  EXPECT_EQ(warned_images(baseline_jpeg()), 0u);
}

TEST(FaultsJpegWarnings, DataEndingBeforeTheEndMarkerIsTruncatedAsInPil) {
  // PIL refuses both: the data stops inside the scan, or only the EOI marker is missing.
  const std::vector<std::byte> jpeg = baseline_jpeg();
  for (const size_t cut : {jpeg.size() / 2, jpeg.size() - 2}) {
    const std::vector<std::byte> part(jpeg.begin(), jpeg.begin() + static_cast<long>(cut));
    ImageDecoder dec;
    std::vector<std::byte> buf;
    EXPECT_THROW(dec.decode_full(part, buf), DecodeFailure) << "cut at " << cut;
    // The decoder stays usable after the failure.
    EXPECT_EQ(dec.decode_full(jpeg, buf).w, 96);
  }
}

}  // namespace
}  // namespace stoker

namespace stoker {
namespace {

// A JPEG whose frame header (SOF0) claims width x height, over real scan data.
std::vector<std::byte> jpeg_claiming(int width, int height) {
  std::vector<std::byte> jpeg = encode_jpeg(synthetic_image(16, 16, 5), 16, 16, 90);
  const size_t sof = find_marker(jpeg, 0xc0);  // FFC0, length(2), precision(1), height, width
  jpeg[sof + 5] = std::byte(height >> 8);
  jpeg[sof + 6] = std::byte(height & 0xff);
  jpeg[sof + 7] = std::byte(width >> 8);
  jpeg[sof + 8] = std::byte(width & 0xff);
  return jpeg;
}

// Before: a header claiming 60000x60000 made the worker allocate ~10 GB for the pixels
// (a decompression bomb), far past the plan's memory budget. Now it is a corrupt sample
// with the reason, refused from the header alone, at the same limit as PIL's.
TEST(FaultsImageSize, AnImageOverPilsPixelLimitIsRefusedFromItsHeader) {
  ImageDecoder dec;
  const std::vector<std::byte> bomb = jpeg_claiming(60000, 60000);
  try {
    dec.begin(bomb);
    ADD_FAILURE() << "a 60000x60000 header was accepted";
  } catch (const DecodeFailure& e) {
    EXPECT_STREQ(e.what(),
                 "60000x60000 = 3600000000 pixels, more than 178956970 (PIL's limit too: a "
                 "decompression bomb, or an image to tile first)");
  }
  // At the limit's edge (13377^2 = 178,944,129 pixels) the header is accepted.
  EXPECT_EQ(dec.begin(jpeg_claiming(13377, 13377)).width, 13377);
}

}  // namespace
}  // namespace stoker
