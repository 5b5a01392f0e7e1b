#include "collectors/prometheus/prom_reply.h"

#include <fmt/format.h>
#include <rapidjson/reader.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "core/json_dom.h"

namespace tfdiag {

namespace {

// Where the reader is: each open array or object has one of these.
enum class Ctx {
  kRoot,    // the reply object
  kData,    // data
  kResult,  // data.result
  kSeries,  // data.result[i] (an object)
  kMetric,  // data.result[i].metric
  kValues,  // data.result[i].values
  kPoint,   // [t, "v"]: data.result[i].value or an element of values
  kSkip,    // a member tfdiag does not read
};

class Handler : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, Handler> {
 public:
  Handler(const std::string& where, int64_t max_series) : where_(where), max_(max_series) {}

  PromReply reply;
  std::string fail;  // why a handler returned false (empty: a syntax error, or too deep)
  bool too_deep = false;
  bool root_object = false;

  bool StartObject() { return Open(true); }
  bool StartArray() { return Open(false); }
  bool EndObject(rapidjson::SizeType) {
    const Ctx c = Close();
    if (c == Ctx::kSeries && !metric_) return Fail("data.result[{}].metric: expected an object");
    return true;
  }
  bool EndArray(rapidjson::SizeType) {
    const Ctx c = Close();
    if (c == Ctx::kPoint) {
      if (pos_ != 2) return BadPoint();
      reply.series.back().points.emplace_back(t_, v_);
    }
    return true;
  }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    key_.assign(s, n);
    return true;
  }
  bool String(const char* s, rapidjson::SizeType n, bool) {
    if (PointExpected()) return BadPoint();
    switch (Top()) {
      case Ctx::kRoot:
        if (key_ == "status") reply.status.assign(s, n);
        if (key_ == "error") reply.error.assign(s, n);
        return true;
      case Ctx::kData:
        if (key_ == "resultType") reply.result_type.assign(s, n);
        return true;
      case Ctx::kMetric:
        reply.series.back().labels[key_].assign(s, n);
        return true;
      case Ctx::kPoint:
      case Ctx::kResult:  // a scalar result: [t, "v"]
        // Prometheus writes sample values as strings ("1.5", "NaN", "+Inf").
        return Scalar(false, std::strtod(std::string(s, n).c_str(), nullptr));
      case Ctx::kValues:
        return BadPoint();
      default:
        return true;
    }
  }
  bool Double(double d) { return Number(d); }
  bool Int(int i) { return Number(i); }
  bool Uint(unsigned u) { return Number(u); }
  bool Int64(int64_t i) { return Number(static_cast<double>(i)); }
  bool Uint64(uint64_t u) { return Number(static_cast<double>(u)); }
  // null, true, false: a null value reads as NaN, as a missing sample.
  bool Default() {
    if (PointExpected() || Top() == Ctx::kValues) return BadPoint();
    if (Top() == Ctx::kPoint) return pos_ == 1 ? Scalar(false, NAN) : BadPoint();
    if (Top() == Ctx::kResult) return Scalar(false, NAN);
    return true;
  }

  // The scalar result's point, when the result held [t, "v"] rather than series.
  bool scalar_point(double* t, double* v) const {
    if (scalar_pos_ != 2 || !scalar_t_ok_) return false;
    *t = scalar_t_;
    *v = scalar_v_;
    return true;
  }
  int scalar_elements() const { return scalar_pos_; }

 private:
  Ctx Top() const { return stack_.empty() ? Ctx::kSkip : stack_.back(); }

  bool Open(bool object) {
    if (++depth_ > kMaxJsonDepth) {
      too_deep = true;
      return false;
    }
    if (stack_.empty()) {  // the reply itself
      root_object = object;
      stack_.push_back(object ? Ctx::kRoot : Ctx::kSkip);
      return true;
    }
    Ctx c = Ctx::kSkip;
    switch (Top()) {
      case Ctx::kRoot:
        if (key_ == "data" && object) c = Ctx::kData;
        break;
      case Ctx::kData:
        if (key_ == "result" && !object) {
          c = Ctx::kResult;
          reply.has_result = true;
        }
        break;
      case Ctx::kResult:
        if (!object || scalar_pos_ > 0) {
          return Fail("data.result[{}]: expected a series object", reply.series.size());
        }
        if (static_cast<int64_t>(reply.series.size()) >= max_) {
          fail = fmt::format(
              "{}: the reply has more than {} series, the most tfdiag reads from one "
              "query",
              where_, max_);
          return false;
        }
        reply.series.emplace_back();
        metric_ = false;
        c = Ctx::kSeries;
        break;
      case Ctx::kSeries:
        if (key_ == "metric" && object) {
          metric_ = true;
          c = Ctx::kMetric;
        } else if (key_ == "values" && !object) {
          values_key_ = "values";
          c = Ctx::kValues;
        } else if (key_ == "value") {
          values_key_ = "value";
          if (object) return BadPoint();
          c = Ctx::kPoint;
          pos_ = 0;
        }
        break;
      case Ctx::kValues:
        if (object) return BadPoint();
        c = Ctx::kPoint;
        pos_ = 0;
        break;
      case Ctx::kPoint:
        return BadPoint();
      default:
        break;
    }
    stack_.push_back(c);
    return true;
  }
  Ctx Close() {
    --depth_;
    const Ctx c = Top();
    stack_.pop_back();
    return c;
  }

  // A scalar member "value" or "values" of a series, where a point or points belong.
  bool PointExpected() {
    if (Top() != Ctx::kSeries || (key_ != "value" && key_ != "values")) return false;
    values_key_ = key_;
    return true;
  }
  bool Number(double d) {
    if (PointExpected()) return BadPoint();
    if (Top() == Ctx::kPoint || Top() == Ctx::kResult) return Scalar(true, d);
    if (Top() == Ctx::kValues) return BadPoint();
    return true;
  }
  // The next element of a point (or of a scalar result): a time, then a value.
  bool Scalar(bool number, double d) {
    if (Top() == Ctx::kResult) {
      if (!reply.series.empty()) return Fail("data.result[{}]: expected a series object");
      if (scalar_pos_ == 0) {
        scalar_t_ok_ = number && d >= 0 && d <= kMaxPromUnixSeconds;
        scalar_t_ = d;
      } else {
        scalar_v_ = d;
      }
      ++scalar_pos_;
      return true;
    }
    if (pos_ == 0) {
      if (!number || !(d >= 0 && d <= kMaxPromUnixSeconds)) return BadPoint();
      t_ = d;
    } else if (pos_ == 1) {
      v_ = d;
    } else {
      return BadPoint();
    }
    ++pos_;
    return true;
  }
  bool BadPoint() {
    return Fail(values_key_ == "values"
                    ? "data.result[{}].values: expected [time (Unix s, 0..4e9), \"value\"] pairs"
                    : "data.result[{}].value: expected [time (Unix s, 0..4e9), \"value\"]");
  }
  // `what` names data.result[index], by default the series being read.
  bool Fail(fmt::format_string<size_t> what, size_t index = SIZE_MAX) {
    if (index == SIZE_MAX) index = reply.series.empty() ? 0 : reply.series.size() - 1;
    fail = where_ + ": " + fmt::format(what, index);
    return false;
  }

  const std::string& where_;
  const int64_t max_;
  std::vector<Ctx> stack_;
  std::string key_, values_key_;
  int depth_ = 0;
  bool metric_ = false;
  int pos_ = 0;  // elements of the current point read
  double t_ = 0, v_ = 0;
  int scalar_pos_ = 0;
  bool scalar_t_ok_ = false;
  double scalar_t_ = 0, scalar_v_ = 0;
};

}  // namespace

StatusOr<PromReply> ParsePromReply(char* text, size_t size, const std::string& where,
                                   int64_t max_series) {
  TFDIAG_RETURN_IF_ERROR(NoNulInJson(where, text, size));
  Handler h(where, max_series);
  JsonReader reader;
  rapidjson::InsituStringStream in(text);
  const rapidjson::ParseResult r =
      reader.Parse<rapidjson::kParseInsituFlag | rapidjson::kParseIterativeFlag>(in, h);
  if (!h.fail.empty()) return InvalidInput("{}", h.fail);
  TFDIAG_RETURN_IF_ERROR(JsonParseStatus(where, r, h.too_deep));
  PromReply out = std::move(h.reply);
  if (!h.root_object) out.status.clear();
  if (out.result_type == "scalar" || out.result_type == "string") {
    double t = 0, v = 0;
    if (!h.scalar_point(&t, &v)) {
      return InvalidInput("{}: data.result: expected [time (Unix s), \"value\"]", where);
    }
    out.series.assign(1, PromSeries{});
    out.series[0].points.emplace_back(t, v);
  } else if (h.scalar_elements() > 0) {
    return InvalidInput("{}: data.result[0]: expected a series object", where);
  }
  return out;
}

}  // namespace tfdiag
