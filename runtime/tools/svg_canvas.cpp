#include "svg_canvas.hpp"

#include <cmath>
#include <cstdio>

namespace stoker::cli {

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  std::string s = buf;
  if (s.ends_with(".0")) s.resize(s.size() - 2);
  return s;
}

struct Rgb {
  double r, g, b;  // 0..255
};

Rgb parse_rgb(const std::string& hex) {
  unsigned r = 0, g = 0, b = 0;
  std::sscanf(hex.c_str(), "#%02x%02x%02x", &r, &g, &b);
  return {double(r), double(g), double(b)};
}

std::string to_hex(const Rgb& c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", int(std::lround(c.r)), int(std::lround(c.g)),
                int(std::lround(c.b)));
  return buf;
}

// HSL (h in degrees, s and l in 0..1) to RGB.
Rgb from_hsl(double h, double s, double l) {
  const double c = (1 - std::fabs(2 * l - 1)) * s, hp = std::fmod(h, 360.0) / 60;
  const double x = c * (1 - std::fabs(std::fmod(hp, 2.0) - 1)), m = l - c / 2;
  double r = 0, g = 0, b = 0;
  if (hp < 1)
    r = c, g = x;
  else if (hp < 2)
    r = x, g = c;
  else if (hp < 3)
    g = c, b = x;
  else if (hp < 4)
    g = x, b = c;
  else if (hp < 5)
    r = x, b = c;
  else
    r = c, b = x;
  return {(r + m) * 255, (g + m) * 255, (b + m) * 255};
}

}  // namespace

void SvgCanvas::rect(double x, double y, double w, double h, const Style& s) {
  body_ += "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(w) + "\" height=\"" +
           num(h) + "\" fill=\"" + s.fill + "\"";
  if (s.radius > 0) body_ += " rx=\"" + num(s.radius) + "\"";
  if (s.stroke != "none")
    body_ += " stroke=\"" + s.stroke + "\" stroke-width=\"" + num(s.stroke_width) + "\"";
  body_ += "/>\n";
}

void SvgCanvas::text(double x, double y, const std::string& s, const Font& f) {
  body_ += "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" font-size=\"" + num(f.size) +
           "\" fill=\"" + f.colour + "\"";
  if (f.bold) body_ += " font-weight=\"bold\"";
  if (std::string(f.anchor) != "start") body_ += " text-anchor=\"" + std::string(f.anchor) + "\"";
  body_ += ">" + xml_escape(s) + "</text>\n";
}

void SvgCanvas::line(double x1, double y1, double x2, double y2, const std::string& colour,
                     double width) {
  body_ += "<line x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x2) + "\" y2=\"" +
           num(y2) + "\" stroke=\"" + colour + "\" stroke-width=\"" + num(width) + "\"/>\n";
}

void SvgCanvas::polyline(const std::vector<std::pair<double, double>>& points,
                         const std::string& colour, double width, bool dashed) {
  std::string xy;
  for (const auto& [x, y] : points) xy += (xy.empty() ? "" : " ") + num(x) + "," + num(y);
  body_ += "<polyline points=\"" + xy + "\" fill=\"none\" stroke=\"" + colour +
           "\" stroke-width=\"" + num(width) + "\"" + (dashed ? " stroke-dasharray=\"5,3\"" : "") +
           "/>\n";
}

void SvgCanvas::circle(double x, double y, double r, const std::string& fill) {
  body_ += "<circle class=\"point\" cx=\"" + num(x) + "\" cy=\"" + num(y) + "\" r=\"" + num(r) +
           "\" fill=\"" + fill + "\"/>\n";
}

std::string SvgCanvas::document(double w, double h, const std::string& title) const {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
         "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
         num(w) + "\" height=\"" + num(h) + "\" viewBox=\"0 0 " + num(w) + " " + num(h) +
         "\" font-family=\"DejaVu Sans, Verdana, Helvetica, Arial, sans-serif\">\n"
         "<title>" +
         xml_escape(title) +
         "</title>\n"
         "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n" +
         body_ + "</svg>\n";
}

std::string rank_colour(int i) {
  // Tableau 20: the ten strong colours first, then their light partners.
  static const char* const kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                         "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
                                         "#a0cbe8", "#ffbe7d", "#ff9d9a", "#86bcb6", "#8cd17d",
                                         "#f1ce63", "#d4a6c8", "#fabfd2", "#d7b5a6", "#79706e"};
  constexpr int n = sizeof kPalette / sizeof kPalette[0];
  if (i >= 0 && i < n) return kPalette[i];
  // Beyond: the golden angle spreads hues apart; two lightness levels part neighbours.
  return to_hex(from_hsl((i - n) * 137.508, 0.55, i % 2 ? 0.62 : 0.48));
}

std::string tint(const std::string& colour, double amount) {
  const Rgb c = parse_rgb(colour);
  auto mix = [amount](double v) { return 255 - (255 - v) * amount; };
  return to_hex({mix(c.r), mix(c.g), mix(c.b)});
}

std::string text_colour_on(const std::string& colour) {
  const Rgb c = parse_rgb(colour);
  const double luma = (0.299 * c.r + 0.587 * c.g + 0.114 * c.b) / 255;
  return luma < 0.55 ? "#ffffff" : "#222222";
}

}  // namespace stoker::cli
