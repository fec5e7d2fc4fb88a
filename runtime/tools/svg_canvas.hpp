// The few SVG elements stoker's pictures use (rounded boxes, text, a line), with XML escaping,
// and the rank colours: one distinct colour per rank, a light tint of it for box fills, and a
// text colour readable on it.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace stoker::cli {

class SvgCanvas {
 public:
  struct Style {
    std::string fill = "none", stroke = "none";
    double stroke_width = 1, radius = 0;
  };
  struct Font {
    double size = 12;
    std::string colour = "#222222";
    bool bold = false;
    const char* anchor = "start";  // start, middle, end
  };

  void rect(double x, double y, double w, double h, const Style& style);
  // (x, y) is the text's baseline start (or middle/end, after the font's anchor).
  void text(double x, double y, const std::string& s, const Font& font);
  void line(double x1, double y1, double x2, double y2, const std::string& colour, double width);
  void polyline(const std::vector<std::pair<double, double>>& points, const std::string& colour,
                double width, bool dashed = false);
  void circle(double x, double y, double r, const std::string& fill);  // class "point"
  // The whole document, `w` x `h` pixels, on a white background.
  std::string document(double w, double h, const std::string& title) const;

 private:
  std::string body_;
};

// `s` with &, <, > and " escaped for XML and HTML.
std::string xml_escape(const std::string& s);

// Rank i's colour ("#4e79a7"): 20 hand-picked ones, then evenly spread hues.
std::string rank_colour(int i);
// `colour` mixed with white: amount 0 = white, 1 = the colour.
std::string tint(const std::string& colour, double amount);
// Black or white, whichever reads better on `colour`.
std::string text_colour_on(const std::string& colour);

}  // namespace stoker::cli
