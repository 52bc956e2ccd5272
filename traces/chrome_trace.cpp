#include "traces/chrome_trace.hpp"

#include <string>

#include "io/text_format.hpp"

namespace capsim::traces {
namespace {

// JSON string escaping (RFC 8259 §7): quotes, backslash and control characters.
std::string escape(const std::string& s) {
  std::string out;
  out.reserve(s.size() + 2);
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += io::printf_string("\\u%04x", static_cast<unsigned>(c));
        } else {
          out += c;
        }
    }
  }
  return out;
}

// Microseconds with nanosecond resolution, fixed format so output is deterministic.
std::string micros(double seconds) {
  return io::printf_string("%.3f", seconds * 1e6);
}

}  // namespace

void write_chrome_trace(std::ostream& out, const ChromeTrace& trace) {
  out << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  bool first = true;
  auto sep = [&] {
    if (!first)
      out << ",\n";
    first = false;
  };
  // Metadata events name each process (GPU track) and thread (stream) and fix their order.
  for (size_t p = 0; p < trace.tracks.size(); ++p) {
    sep();
    out << "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" << p << ",\"args\":{\"name\":\""
        << escape(trace.tracks[p]) << "\"}}";
    sep();
    out << "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":" << p
        << ",\"args\":{\"sort_index\":" << p << "}}";
    for (size_t t = 0; t < trace.streams.size(); ++t) {
      sep();
      out << "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" << p << ",\"tid\":" << t
          << ",\"args\":{\"name\":\"" << escape(trace.streams[t]) << "\"}}";
    }
  }
  for (const TraceSlice& s : trace.slices) {
    sep();
    out << "{\"ph\":\"X\",\"pid\":" << s.track << ",\"tid\":" << s.stream << ",\"name\":\""
        << escape(s.name) << "\",\"cat\":\"" << escape(s.category)
        << "\",\"ts\":" << micros(s.start_s) << ",\"dur\":" << micros(s.duration_s) << "}";
  }
  out << "\n]}\n";
}

void write_job_traces(std::ostream& out, const std::vector<JobTrace>& jobs) {
  out << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  bool first = true;
  auto sep = [&] {
    if (!first)
      out << ",\n";
    first = false;
  };
  for (size_t p = 0; p < jobs.size(); ++p) {
    const ChromeTrace& trace = *jobs[p].trace;
    sep();
    out << "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" << p << ",\"args\":{\"name\":\""
        << escape(jobs[p].job) << "\"}}";
    sep();
    out << "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":" << p
        << ",\"args\":{\"sort_index\":" << p << "}}";
    for (size_t k = 0; k < trace.tracks.size(); ++k) {
      for (size_t t = 0; t < trace.streams.size(); ++t) {
        const size_t tid = k * trace.streams.size() + t;
        sep();
        out << "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" << p << ",\"tid\":" << tid
            << ",\"args\":{\"name\":\"" << escape(trace.tracks[k] + ": " + trace.streams[t])
            << "\"}}";
        sep();
        out << "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":" << p << ",\"tid\":" << tid
            << ",\"args\":{\"sort_index\":" << tid << "}}";
      }
    }
  }
  for (size_t p = 0; p < jobs.size(); ++p) {
    const ChromeTrace& trace = *jobs[p].trace;
    for (const TraceSlice& s : trace.slices) {
      const size_t tid =
          static_cast<size_t>(s.track) * trace.streams.size() + static_cast<size_t>(s.stream);
      sep();
      out << "{\"ph\":\"X\",\"pid\":" << p << ",\"tid\":" << tid << ",\"name\":\"" << escape(s.name)
          << "\",\"cat\":\"" << escape(s.category) << "\",\"ts\":" << micros(s.start_s)
          << ",\"dur\":" << micros(s.duration_s) << "}";
    }
  }
  out << "\n]}\n";
}

}  // namespace capsim::traces
