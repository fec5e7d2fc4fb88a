// The PNG decoder on every PNG kind libpng writes, against PIL's convert('RGB') rules
// written out here independently (tests/python/test_image_kinds.py checks the same kinds
// against PIL itself).
#include <gtest/gtest.h>

#include <random>

#include <zlib.h>

#include "image_fixtures.hpp"
#include "transforms/image_decoder.hpp"

namespace stoker {
namespace {

struct PngCase {
  const char* name;
  int colour, depth;
  bool interlaced = false, palette_alpha = false;
};

int channels_of(int colour) {
  switch (colour) {
    case PNG_COLOR_TYPE_GRAY_ALPHA:
      return 2;
    case PNG_COLOR_TYPE_RGB:
      return 3;
    case PNG_COLOR_TYPE_RGBA:
      return 4;
    default:
      return 1;  // grey, palette
  }
}

// Random samples for a case, the PNG holding them, and the RGB PIL makes of it.
struct PngImage {
  std::vector<std::byte> file;
  std::vector<uint8_t> rgb;
  int w = 0, h = 0;
};

PngImage make_png(const PngCase& c, int w, int h) {
  std::mt19937 rng(static_cast<unsigned>(c.colour * 100 + c.depth));
  const int ch = channels_of(c.colour);
  const bool grey16 = c.colour == PNG_COLOR_TYPE_GRAY && c.depth == 16;
  // 16-bit grey: half the values below 256, so PIL's clip shows on both sides.
  const unsigned range = grey16 ? 512 : 1u << c.depth;
  test::PngSpec spec{w, h, c.depth, c.colour, c.interlaced, {}, {}};
  if (c.colour == PNG_COLOR_TYPE_PALETTE) {
    for (unsigned i = 0; i < range; ++i) {
      spec.palette.push_back({static_cast<png_byte>(rng()), static_cast<png_byte>(rng()),
                              static_cast<png_byte>(rng())});
    }
    if (c.palette_alpha) spec.palette_alpha = {0, 128, 255};
  }
  const size_t row_bits = static_cast<size_t>(w) * ch * c.depth;
  std::vector<uint8_t> rows((row_bits + 7) / 8 * h, 0), rgb(static_cast<size_t>(w) * h * 3);
  for (int y = 0; y < h; ++y) {
    uint8_t* row = rows.data() + (row_bits + 7) / 8 * y;
    for (int x = 0; x < w; ++x) {
      unsigned v[4];
      for (int k = 0; k < ch; ++k) {
        v[k] = rng() % range;
        const size_t bit = (static_cast<size_t>(x) * ch + k) * c.depth;
        if (c.depth == 16) {
          row[bit / 8] = static_cast<uint8_t>(v[k] >> 8);
          row[bit / 8 + 1] = static_cast<uint8_t>(v[k]);
        } else {
          row[bit / 8] |= static_cast<uint8_t>(v[k] << (8 - c.depth - bit % 8));
        }
      }
      uint8_t* out = rgb.data() + (static_cast<size_t>(y) * w + x) * 3;
      if (c.colour == PNG_COLOR_TYPE_PALETTE) {
        out[0] = spec.palette[v[0]].red;
        out[1] = spec.palette[v[0]].green;
        out[2] = spec.palette[v[0]].blue;
        continue;
      }
      for (int k = 0; k < 3; ++k) {
        const unsigned s = v[ch >= 3 ? k : 0];
        if (grey16) {
          out[k] = static_cast<uint8_t>(std::min(s, 255u));  // PIL mode I -> RGB clips
        } else if (c.depth == 16) {
          out[k] = static_cast<uint8_t>(s >> 8);  // PIL unpacks the high byte
        } else {
          out[k] = static_cast<uint8_t>(s * (255 / (range - 1)));  // 1, 2, 4 bits scale up
        }
      }
    }
  }
  return {test::encode_png(spec, std::move(rows)), std::move(rgb), w, h};
}

class PngKinds : public ::testing::TestWithParam<PngCase> {};

TEST_P(PngKinds, DecodeToPilsRgb) {
  const PngImage img = make_png(GetParam(), 37, 23);
  ASSERT_EQ(sniff_image(img.file), ImageFormat::Png);
  ImageDecoder dec;
  std::vector<std::byte> buf;
  const DecodedRegion r = dec.decode_full(img.file, buf);
  ASSERT_EQ(r.w, img.w);
  ASSERT_EQ(r.h, img.h);
  int mismatches = 0;
  for (int y = 0; y < r.h; ++y) {
    for (int x = 0; x < r.w; ++x) {
      mismatches +=
          std::memcmp(r.pixel(x, y), &img.rgb[(static_cast<size_t>(y) * img.w + x) * 3], 3) != 0;
    }
  }
  EXPECT_EQ(mismatches, 0);
  // A region is the same pixels.
  EXPECT_EQ(dec.begin(img.file).width, img.w);
  EXPECT_FALSE(dec.scalable());
  const DecodedRegion part = dec.decode(1, {5, 7, 11, 9}, buf);
  ASSERT_EQ(part.x, 5);
  ASSERT_EQ(part.y, 7);
  for (int y = 7; y < 16; ++y) {
    for (int x = 5; x < 16; ++x) {
      ASSERT_EQ(
          0, std::memcmp(part.pixel(x, y), &img.rgb[(static_cast<size_t>(y) * img.w + x) * 3], 3))
          << x << "," << y;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, PngKinds,
    ::testing::Values(
        PngCase{"grey1", PNG_COLOR_TYPE_GRAY, 1}, PngCase{"grey2", PNG_COLOR_TYPE_GRAY, 2},
        PngCase{"grey4", PNG_COLOR_TYPE_GRAY, 4}, PngCase{"grey8", PNG_COLOR_TYPE_GRAY, 8},
        PngCase{"grey16", PNG_COLOR_TYPE_GRAY, 16},
        PngCase{"greyalpha8", PNG_COLOR_TYPE_GRAY_ALPHA, 8},
        PngCase{"greyalpha16", PNG_COLOR_TYPE_GRAY_ALPHA, 16},
        PngCase{"rgb8", PNG_COLOR_TYPE_RGB, 8}, PngCase{"rgb16", PNG_COLOR_TYPE_RGB, 16},
        PngCase{"rgba8", PNG_COLOR_TYPE_RGBA, 8}, PngCase{"rgba16", PNG_COLOR_TYPE_RGBA, 16},
        PngCase{"palette2", PNG_COLOR_TYPE_PALETTE, 2},
        PngCase{"palette8", PNG_COLOR_TYPE_PALETTE, 8},
        PngCase{"palette8trns", PNG_COLOR_TYPE_PALETTE, 8, false, true},
        PngCase{"rgb8interlaced", PNG_COLOR_TYPE_RGB, 8, true},
        PngCase{"grey16interlaced", PNG_COLOR_TYPE_GRAY, 16, true}),
    [](const ::testing::TestParamInfo<PngCase>& i) { return std::string(i.param.name); });

// A palette PNG written chunk by chunk (libpng refuses to write an index past the palette):
// 8-bit indices, `entries` colours (entry i is (i+10, 2i, 255-i)), a tRNS of one entry.
std::vector<std::byte> palette_png(int w, int h, int entries, const std::vector<uint8_t>& idx) {
  std::vector<std::byte> out;
  auto put = [&](const void* p, size_t n) {
    const auto* b = static_cast<const std::byte*>(p);
    out.insert(out.end(), b, b + n);
  };
  auto be32 = [](uint32_t v) {
    return std::array<uint8_t, 4>{uint8_t(v >> 24), uint8_t(v >> 16), uint8_t(v >> 8), uint8_t(v)};
  };
  auto chunk = [&](const char* type, const std::vector<uint8_t>& data) {
    put(be32(static_cast<uint32_t>(data.size())).data(), 4);
    const size_t at = out.size();
    put(type, 4);
    put(data.data(), data.size());
    const auto crc = crc32(0, reinterpret_cast<const Bytef*>(out.data() + at), data.size() + 4);
    put(be32(static_cast<uint32_t>(crc)).data(), 4);
  };
  put("\x89PNG\r\n\x1a\n", 8);
  std::vector<uint8_t> ihdr;
  for (uint32_t v : {uint32_t(w), uint32_t(h)}) {
    const auto b = be32(v);
    ihdr.insert(ihdr.end(), b.begin(), b.end());
  }
  ihdr.insert(ihdr.end(), {8, PNG_COLOR_TYPE_PALETTE, 0, 0, 0});
  chunk("IHDR", ihdr);
  std::vector<uint8_t> plte;
  for (int i = 0; i < entries; ++i)
    plte.insert(plte.end(), {uint8_t(i + 10), uint8_t(2 * i), uint8_t(255 - i)});
  chunk("PLTE", plte);
  chunk("tRNS", {0});
  std::vector<uint8_t> raw;
  for (int y = 0; y < h; ++y) {
    raw.push_back(0);  // filter: none
    raw.insert(raw.end(), idx.begin() + y * w, idx.begin() + (y + 1) * w);
  }
  uLongf size = compressBound(raw.size());
  std::vector<uint8_t> z(size);
  compress(z.data(), &size, raw.data(), raw.size());
  z.resize(size);
  chunk("IDAT", z);
  chunk("IEND", {});
  return out;
}

// Found in Go's PNG test files (image/png/testdata/invalid-palette.png: 255 colours, one pixel
// of index 255): PIL's palette past the file's colours is its grey ramp, so that pixel is
// (255, 255, 255); libpng's expansion made it black. The table below is PIL's (Pillow 9.4:
// every index past a 2-colour palette converts to (i, i, i)).
TEST(FaultsImages, APaletteIndexPastThePaletteIsGreyAsInPil) {
  const int w = 16, h = 16, entries = 2;
  std::vector<uint8_t> idx(static_cast<size_t>(w) * h);
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<uint8_t>(i);  // 0..255
  const std::vector<std::byte> file = palette_png(w, h, entries, idx);
  ImageDecoder dec;
  std::vector<std::byte> buf;
  const DecodedRegion r = dec.decode_full(file, buf);
  ASSERT_EQ(r.w, w);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const int i = idx[static_cast<size_t>(y) * w + x];
      const uint8_t want[3] = {uint8_t(i < entries ? i + 10 : i), uint8_t(i < entries ? 2 * i : i),
                               uint8_t(i < entries ? 255 - i : i)};
      ASSERT_EQ(0, std::memcmp(r.pixel(x, y), want, 3)) << "index " << i;
    }
  }
  dec.begin(file);
  const DecodedRegion part = dec.decode(1, {3, 9, 5, 4}, buf);  // a region: the same
  EXPECT_EQ(0, std::memcmp(part.pixel(3, 9), std::array<uint8_t, 3>{147, 147, 147}.data(), 3));
}

TEST(FaultsImages, ATruncatedPngFailsWhateverRegionIsAsked) {
  const PngImage img = make_png({"rgb8", PNG_COLOR_TYPE_RGB, 8}, 300, 200);
  ImageDecoder dec;
  std::vector<std::byte> buf;
  for (size_t keep : {img.file.size() * 2 / 3, img.file.size() - 13, size_t{60}, size_t{8}}) {
    const std::vector<std::byte> cut(img.file.begin(), img.file.begin() + keep);
    // The top rows alone may be intact; the missing IEND makes the decoder read them all.
    EXPECT_THROW(
        {
          dec.begin(cut);
          dec.decode(1, {0, 0, 10, 2}, buf);
        },
        DecodeFailure)
        << keep << " of " << img.file.size() << " bytes";
  }
  std::vector<std::byte> bad_crc = img.file;
  bad_crc[img.file.size() / 2] ^= std::byte{0x55};  // inside the IDAT data
  EXPECT_THROW(dec.decode_full(bad_crc, buf), DecodeFailure);
  EXPECT_EQ(dec.decode_full(img.file, buf).w, 300);  // still usable
}

TEST(FaultsImages, DataThatIsNoJpegOrPngSaysWhatItIs) {
  auto message = [](const std::string& bytes) {
    try {
      sniff_image(std::as_bytes(std::span(bytes.data(), bytes.size())));
    } catch (const DecodeFailure& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(message(""), "empty file (0 bytes)");
  EXPECT_EQ(message("GIF89a......"),
            "a GIF image: stoker decodes JPEG, PNG and WebP only (convert the file)");
  EXPECT_EQ(message(std::string("RIFF\x10\0\0\0WEBPVP8 ", 16)), "(no error)");  // WebP
  EXPECT_NE(message(std::string("II*\0", 4) + "...").find("a TIFF image"), std::string::npos);
  EXPECT_NE(message("BM......").find("a BMP image"), std::string::npos);
  EXPECT_NE(message(std::string("\0\0\1\0\1\0", 6)).find("an ICO image"), std::string::npos);
  EXPECT_EQ(message("hello world"),
            "not a JPEG, PNG or WebP file: 11 bytes starting with 0x68 0x65 0x6c 0x6c");
  EXPECT_EQ(message("\xff\xd8\xff\xe0"), "(no error)");
}

}  // namespace
}  // namespace stoker
