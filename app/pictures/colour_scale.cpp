// The colour scales of colour_scale.h.
#include "pictures/colour_scale.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "attn/error.h"

namespace app {
namespace {

constexpr double kSmallestPosition = 1e-6;  // a weight below the bottom: darkest, not masked

// The 99th percentile of the non-zero values (the largest with fewer than 100).
double p99_of(std::vector<float> nonzero, double max_value) {
  if (nonzero.size() < 100) return max_value;
  const std::size_t k = nonzero.size() * 99 / 100;
  std::nth_element(nonzero.begin(), nonzero.begin() + std::ptrdiff_t(k), nonzero.end());
  return nonzero[k];
}

std::string g3(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace

ScaleKind scale_kind(const std::string& name, std::size_t keys) {
  if (name == "auto") return keys > kAutoLogKeys ? ScaleKind::log : ScaleKind::linear;
  if (name == "linear") return ScaleKind::linear;
  if (name == "log") return ScaleKind::log;
  if (name == "percentile") return ScaleKind::percentile;
  throw attn::Error(
      attn::Exit::usage,
      "--color-scale: expected auto, linear, log or percentile, found '" + name + "'");
}

const char* scale_kind_name(ScaleKind kind) {
  return kind == ScaleKind::log ? "log" : kind == ScaleKind::percentile ? "percentile" : "linear";
}

double ColourScale::top(std::size_t k) const {
  return kind == ScaleKind::percentile && k < head_top.size() ? head_top[k] : vmax;
}

double ColourScale::position(double v, std::size_t k) const {
  if (!(v > 0)) return 0;
  double t = 0;
  if (kind == ScaleKind::log)
    t = (std::log10(v) - std::log10(lo)) / (std::log10(vmax) - std::log10(lo));
  else
    t = v / top(k);
  return std::clamp(t, kSmallestPosition, 1.0);
}

std::string ColourScale::legend() const {
  char lo_text[16];
  std::snprintf(lo_text, sizeof lo_text, "%.0e", lo);
  switch (kind) {
    case ScaleKind::log:
      return "log scale, " + std::string(lo_text) + " .. " + g3(vmax) + " (max)";
    case ScaleKind::percentile:
      return "99th-percentile per head (each head 0 .. its own 99th percentile, brighter "
             "cells saturate)";
    default:
      return clipped ? "linear, 0 .. " + g3(vmax) +
                           ", the 99th percentile (brighter cells "
                           "saturate; max " +
                           g3(max_value) + ")"
                     : "linear, 0 .. " + g3(vmax) + " (the largest weight)";
  }
}

ColourScale colour_scale(const attn::Tensor& cells, ScaleKind kind, std::size_t keys) {
  // The first query of a causal map always puts 1.0 on token 0 while long
  // rows spread ~1/S: a scale up to 1.0 would leave the long rows dark.
  ColourScale c;
  c.kind = kind;
  std::vector<float> nonzero;
  for (float v : cells.data)
    if (v > 0) nonzero.push_back(v);
  for (float v : nonzero) c.max_value = std::max(c.max_value, double(v));
  c.vmax = c.max_value > 0 ? c.max_value : 1.0;  // all masked: a scale from 0 to 1
  if (kind == ScaleKind::linear) {
    const double p99 = p99_of(nonzero, c.max_value);
    if (p99 < 0.5 * c.max_value) {
      c.vmax = p99;
      c.clipped = true;
    }
  } else if (kind == ScaleKind::log) {
    // A power of ten at or below a uniform row's weight, at least a decade under the top.
    const double uniform = 1.0 / double(std::max<std::size_t>(1, keys ? keys : cells.shape.back()));
    c.lo = std::pow(10.0, std::floor(std::log10(uniform)));
    if (c.lo > c.vmax / 10) c.lo = std::pow(10.0, std::floor(std::log10(c.vmax)) - 1);
  } else {
    const std::size_t K = cells.shape.at(0), per = K ? cells.data.size() / K : 0;
    for (std::size_t k = 0; k < K; ++k) {
      std::vector<float> head;
      double m = 0;
      for (std::size_t i = 0; i < per; ++i)
        if (const float v = cells.data[k * per + i]; v > 0)
          head.push_back(v), m = std::max(m, double(v));
      const double p = p99_of(std::move(head), m);
      c.head_top.push_back(p > 0 ? p : 1.0);
    }
  }
  return c;
}

}  // namespace app
