#include "io/launch_script.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "io/input_error.hpp"

namespace capsim::io {
namespace {

// A piece of a shell word: quoted with '...' or escaped (taken as written), inside "..."
// (variables expanded, no splitting) or bare (expanded and split at white space).
enum class Quoting { kLiteral, kDouble, kBare };

struct Segment {
  std::string text;
  Quoting quoting;
};

// kRedirect: `> FILE`, `2>> FILE`, `< FILE`; the word after it is its target, not an argument.
enum class ItemKind { kWord, kEnd, kOpen, kClose, kRedirect };

struct Item {
  ItemKind kind;
  std::vector<Segment> segments;  // a word's pieces
  int line;
};

bool is_name_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_';
}
bool is_name_char(char c) {
  return is_name_start(c) || std::isdigit(static_cast<unsigned char>(c)) != 0;
}

// Splits the text into words and statement ends as bash's lexer does for the subset launch
// scripts use: quotes, backslash escapes and continuations, comments, ( ) and ; & | separators.
class Lexer {
 public:
  Lexer(const std::string& text, const std::string& file) : text_(text), file_(file) {}

  std::vector<Item> items() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '\\' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n') {
        pos_ += 2;
        ++line_;
        continue;
      }
      const char next = pos_ + 1 < text_.size() ? text_[pos_ + 1] : '\0';
      if (c == '>' || c == '<' || (c == '&' && next == '>')) {
        redirection();
      } else if (c == '\n' || c == ';' || c == '&' || c == '|') {
        end_word();
        items_.push_back({ItemKind::kEnd, {}, line_});
        line_ += c == '\n' ? 1 : 0;
        ++pos_;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        end_word();
        ++pos_;
      } else if (c == '#' && !in_word_) {
        while (pos_ < text_.size() && text_[pos_] != '\n')
          ++pos_;
      } else if (c == '(' || c == ')') {
        parenthesis(c);
      } else {
        word_char();
      }
    }
    end_word();
    return items_;
  }

 private:
  // `(` and `)` of an array (`ARGS=(`: the parenthesis ends the word) or a subshell.
  void parenthesis(char c) {
    end_word();
    items_.push_back({c == '(' ? ItemKind::kOpen : ItemKind::kClose, {}, line_});
    ++pos_;
  }

  // A redirection (`2>&1`, `> log`, `&>> log`, `< in`): its file descriptor (a word of digits
  // just before it) is dropped, and a target file becomes a kRedirect item's next word.
  void redirection() {
    if (in_word_ && word_.segments.size() == 1 &&
        word_.segments.front().quoting == Quoting::kBare &&
        std::all_of(word_.segments.front().text.begin(), word_.segments.front().text.end(),
                    [](char d) { return std::isdigit(static_cast<unsigned char>(d)) != 0; })) {
      in_word_ = false;
    }
    end_word();
    if (text_[pos_] == '&')
      ++pos_;
    while (pos_ < text_.size() && (text_[pos_] == '>' || text_[pos_] == '<'))
      ++pos_;
    if (pos_ < text_.size() && text_[pos_] == '&') {  // >&1: onto another descriptor
      ++pos_;
      while (pos_ < text_.size() &&
             (std::isdigit(static_cast<unsigned char>(text_[pos_])) != 0 || text_[pos_] == '-'))
        ++pos_;
      return;
    }
    items_.push_back({ItemKind::kRedirect, {}, line_});
  }

  void start_word() {
    if (!in_word_) {
      in_word_ = true;
      word_ = {ItemKind::kWord, {}, line_};
    }
  }
  void add(const std::string& s, Quoting q) {
    start_word();
    if (word_.segments.empty() || word_.segments.back().quoting != q)
      word_.segments.push_back({"", q});
    word_.segments.back().text += s;
  }
  void end_word() {
    if (in_word_)
      items_.push_back(word_);
    in_word_ = false;
  }
  [[noreturn]] void unterminated(const char* what, int line) const {
    throw InputError(file_, "line " + std::to_string(line),
                     std::string("unterminated ") + what + " (its closing one is missing)");
  }
  // `$(...)` and `$((...))` with their nested parentheses, kept as written.
  std::string command_substitution() {
    const int start_line = line_;
    std::string s = "$";
    int depth = 0;
    for (++pos_; pos_ < text_.size(); ++pos_) {
      const char c = text_[pos_];
      s += c;
      line_ += c == '\n' ? 1 : 0;
      depth += c == '(' ? 1 : (c == ')' ? -1 : 0);
      if (depth == 0) {
        ++pos_;
        return s;
      }
    }
    unterminated("$(", start_line);
  }
  void word_char() {
    const char c = text_[pos_];
    if (c == '\'') {
      const int start_line = line_;
      const size_t close = text_.find('\'', pos_ + 1);
      if (close == std::string::npos)
        unterminated("single quote", start_line);
      const std::string inside = text_.substr(pos_ + 1, close - pos_ - 1);
      for (char ch : inside)
        line_ += ch == '\n' ? 1 : 0;
      add(inside, Quoting::kLiteral);
      start_word();
      pos_ = close + 1;
    } else if (c == '"') {
      double_quoted();
    } else if (c == '\\' && pos_ + 1 < text_.size()) {
      add(std::string(1, text_[pos_ + 1]), Quoting::kLiteral);
      pos_ += 2;
    } else if (c == '$' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '(') {
      add(command_substitution(), Quoting::kBare);
    } else {
      add(std::string(1, c), Quoting::kBare);
      ++pos_;
    }
  }
  void double_quoted() {
    const int start_line = line_;
    start_word();
    word_.segments.push_back({"", Quoting::kDouble});  // "" is a word of its own
    for (++pos_; pos_ < text_.size(); ++pos_) {
      const char c = text_[pos_];
      if (c == '"') {
        ++pos_;
        return;
      }
      if (c == '\\' && pos_ + 1 < text_.size()) {
        const char next = text_[pos_ + 1];
        if (next == '\n') {
          ++line_;
          ++pos_;
          continue;
        }
        if (next == '"' || next == '\\' || next == '$' || next == '`') {
          add(std::string(1, next), Quoting::kLiteral);
          ++pos_;
          continue;
        }
      }
      if (c == '$' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '(') {
        add(command_substitution(), Quoting::kDouble);
        --pos_;
        continue;
      }
      line_ += c == '\n' ? 1 : 0;
      add(std::string(1, c), Quoting::kDouble);
    }
    unterminated("double quote", start_line);
  }

  const std::string& text_;
  const std::string& file_;
  size_t pos_ = 0;
  int line_ = 1;
  bool in_word_ = false;
  Item word_{ItemKind::kWord, {}, 1};
  std::vector<Item> items_;
};

// Each variable's values (one for a scalar), with what stayed unresolved in them.
using Variables = std::map<std::string, std::vector<ScriptWord>>;

// Expands one word into fields as bash does: variables the file set are substituted, bare
// expansions split at white space, and anything else stays as written, named as unresolved.
class Expander {
 public:
  explicit Expander(const Variables& vars) : vars_(vars) {}

  std::vector<ScriptWord> expand(const Item& word) {
    fields_.clear();
    open_ = false;
    line_ = word.line;
    for (const Segment& s : word.segments) {
      if (s.quoting == Quoting::kLiteral) {
        append(s.text);
        continue;
      }
      // "${EMPTY[@]}" of an empty array is no field at all (bash's rule for "$@"); any other
      // quoted empty string is still a field.
      if (s.quoting == Quoting::kDouble && !is_empty_array(s.text))
        current();
      substitute(s);
    }
    return fields_;
  }

 private:
  [[nodiscard]] bool is_empty_array(const std::string& text) const {
    if (!text.starts_with("${") || !(text.ends_with("[@]}") || text.ends_with("[*]}")))
      return false;
    const auto it = vars_.find(text.substr(2, text.size() - 6));
    return it != vars_.end() && it->second.empty();
  }
  ScriptWord& current() {
    if (!open_) {
      fields_.push_back({"", line_, {}});
      open_ = true;
    }
    return fields_.back();
  }
  void append(const std::string& s) { current().text += s; }
  // Appends a value; bare values split at white space into further fields.
  void append_value(const std::string& value, bool split) {
    if (!split) {
      append(value);
      return;
    }
    size_t i = 0;
    while (i < value.size()) {
      if (std::isspace(static_cast<unsigned char>(value[i])) != 0) {
        open_ = false;
        ++i;
        continue;
      }
      const size_t start = i;
      while (i < value.size() && std::isspace(static_cast<unsigned char>(value[i])) == 0)
        ++i;
      append(value.substr(start, i - start));
    }
  }
  void unresolved(const std::string& written, const std::string& name) {
    current().text += written;
    current().unresolved.push_back(name);
  }
  void substitute(const Segment& s) {
    const bool split = s.quoting == Quoting::kBare;
    const std::string& t = s.text;
    size_t i = 0;
    while (i < t.size()) {
      if (t[i] != '$' || i + 1 == t.size()) {
        append(std::string(1, t[i++]));
        continue;
      }
      if (t[i + 1] == '(') {  // a command substitution, kept whole by the lexer
        unresolved(t.substr(i), t.compare(i, 3, "$((") == 0 ? "$((...))" : "$(...)");
        return;
      }
      if (t[i + 1] == '{') {
        const size_t close = t.find('}', i);
        if (close == std::string::npos) {
          unresolved(t.substr(i), t.substr(i));
          return;
        }
        braced(t.substr(i, close + 1 - i), split);
        i = close + 1;
        continue;
      }
      size_t end = i + 1;
      if (is_name_start(t[end])) {
        while (end < t.size() && is_name_char(t[end]))
          ++end;
      } else {
        ++end;  // $1, $@, $#
      }
      named(t.substr(i, end - i), t.substr(i + 1, end - i - 1), false, split);
      i = end;
    }
  }
  // ${NAME}, ${NAME[@]}, ${NAME:-default}.
  void braced(const std::string& written, bool split) {
    std::string inner = written.substr(2, written.size() - 3);
    std::string fallback;
    bool has_fallback = false;
    if (const size_t dash = inner.find(":-"); dash != std::string::npos) {
      fallback = inner.substr(dash + 2);
      has_fallback = true;
      inner = inner.substr(0, dash);
    }
    bool all = false;
    if (inner.size() > 3 && (inner.ends_with("[@]") || inner.ends_with("[*]"))) {
      all = true;
      inner = inner.substr(0, inner.size() - 3);
    }
    if (has_fallback && vars_.count(inner) == 0) {
      append_value(fallback, split);
      return;
    }
    named(written, inner, all, split);
  }
  void named(const std::string& written, const std::string& name, bool all, bool split) {
    const auto it = vars_.find(name);
    if (it == vars_.end()) {
      unresolved(written, name);
      return;
    }
    const std::vector<ScriptWord>& values = it->second;
    for (size_t k = 0; k < values.size() && (all || k == 0); ++k) {
      if (k > 0)
        open_ = false;
      // A field an element starts is placed on the element's line, not the expansion's.
      const int expansion_line = line_;
      line_ = values[k].line;
      append_value(values[k].text, split);
      line_ = expansion_line;
      if (!values[k].unresolved.empty()) {
        auto& names = current().unresolved;
        names.insert(names.end(), values[k].unresolved.begin(), values[k].unresolved.end());
      }
    }
  }

  const Variables& vars_;
  std::vector<ScriptWord> fields_;
  bool open_ = false;
  int line_ = 0;
};

// The name of an assignment word (`NAME=value`, or `NAME+=value` that appends), or "".
std::string assigned_name(const Item& word) {
  if (word.segments.empty() || word.segments.front().quoting != Quoting::kBare)
    return "";
  const std::string& t = word.segments.front().text;
  const size_t eq = t.find('=');
  if (eq == std::string::npos || eq == 0 || !is_name_start(t[0]))
    return "";
  const size_t end = t[eq - 1] == '+' ? eq - 1 : eq;
  for (size_t i = 1; i < end; ++i) {
    if (!is_name_char(t[i]))
      return "";
  }
  return t.substr(0, end);
}

bool appends(const Item& word) {
  const std::string& t = word.segments.front().text;
  const size_t eq = t.find('=');
  return eq > 0 && t[eq - 1] == '+';
}

// The word after `NAME=`.
Item assigned_value(const Item& word) {
  Item value = word;
  std::string& t = value.segments.front().text;
  t = t.substr(t.find('=') + 1);
  return value;
}

// A scalar assignment's value: its fields joined by spaces.
ScriptWord joined(const std::vector<ScriptWord>& fields, int line) {
  ScriptWord s{"", line, {}};
  for (const ScriptWord& f : fields) {
    s.text += (s.text.empty() ? "" : " ") + f.text;
    s.unresolved.insert(s.unresolved.end(), f.unresolved.begin(), f.unresolved.end());
  }
  return s;
}

bool runs_python_program(const std::string& word) {
  return word.size() > 3 && word.ends_with(".py");
}

// Whether the program is a training entry point (Megatron-LM's pretrain_gpt.py,
// pretrain_mamba.py, train.py, ...), not a data or checkpoint tool run beside it.
bool is_training_program(const std::string& word) {
  const size_t slash = word.find_last_of('/');
  const std::string base = slash == std::string::npos ? word : word.substr(slash + 1);
  return base.starts_with("pretrain") || base.starts_with("train");
}

// Runs the statements of a script: assignments set variables, commands are expanded; keeps the
// training program's arguments and every command word.
class ScriptReader {
 public:
  ScriptReader(std::vector<Item> items, const std::string& file)
      : items_(std::move(items)), file_(file), expander_(vars_) {}

  std::vector<ScriptWord> arguments() {
    size_t i = 0;
    while (i < items_.size()) {
      if (items_[i].kind == ItemKind::kWord)
        statement(i);
      else
        ++i;
    }
    return found_ ? program_arguments_ : all_words_;
  }

 private:
  static bool is_builtin(const std::string& word) {
    return word == "export" || word == "declare" || word == "local" || word == "readonly";
  }

  // One statement from items_[i] up to its end (an array's parentheses span lines).
  void statement(size_t& i) {
    std::vector<ScriptWord> command;
    bool at_start = true;
    bool after_builtin = false;  // `declare -a X=(...)`: the builtin's options
    for (; i < items_.size() && items_[i].kind != ItemKind::kEnd; ++i) {
      const Item& item = items_[i];
      if (item.kind == ItemKind::kRedirect && i + 1 < items_.size() &&
          items_[i + 1].kind == ItemKind::kWord) {
        ++i;  // the redirection's file
        continue;
      }
      if (item.kind != ItemKind::kWord)
        continue;
      const std::string first = item.segments.empty() ? "" : item.segments.front().text;
      if (at_start && (is_builtin(first) || (after_builtin && first.starts_with("-")))) {
        after_builtin = true;
        continue;
      }
      const std::string name = at_start ? assigned_name(item) : "";
      if (name.empty()) {
        at_start = false;
        for (ScriptWord& w : expander_.expand(item))
          command.push_back(std::move(w));
        continue;
      }
      assignment(i, name);
    }
    keep_command(std::move(command));
  }

  // `NAME=value`, `NAME=( ... )` or `NAME+=...` at items_[i]; leaves `i` on its last item.
  void assignment(size_t& i, const std::string& name) {
    const Item& item = items_[i];
    std::vector<ScriptWord> values;
    const bool is_array = i + 1 < items_.size() && items_[i + 1].kind == ItemKind::kOpen &&
                          assigned_value(item).segments.front().text.empty();
    if (is_array) {
      for (i += 2; i < items_.size() && items_[i].kind != ItemKind::kClose; ++i) {
        if (items_[i].kind != ItemKind::kWord)
          continue;
        for (ScriptWord& w : expander_.expand(items_[i]))
          values.push_back(std::move(w));
      }
      if (i == items_.size()) {
        throw InputError(file_, "line " + std::to_string(item.line),
                         "unterminated array " + name + "=( (its closing parenthesis is missing)");
      }
    } else {
      values.push_back(joined(expander_.expand(assigned_value(item)), item.line));
    }
    if (!appends(item)) {
      vars_[name] = std::move(values);
      return;
    }
    std::vector<ScriptWord>& var = vars_[name];
    if (!is_array && var.size() == 1)
      var.front().text += values.front().text;  // X+=text extends a scalar
    else
      var.insert(var.end(), values.begin(), values.end());
  }

  // The first training program run (pretrain*.py, train*.py) gives the arguments, else the
  // last program run.
  void keep_command(std::vector<ScriptWord> command) {
    const auto program = std::find_if(command.begin(), command.end(), [](const ScriptWord& w) {
      return runs_python_program(w.text);
    });
    if (program != command.end() && !found_training_) {
      program_arguments_.assign(program + 1, command.end());
      found_training_ = is_training_program(program->text);
      found_ = true;
    }
    for (ScriptWord& w : command)
      all_words_.push_back(std::move(w));
  }

  std::vector<Item> items_;
  const std::string& file_;
  Variables vars_;
  Expander expander_;
  std::vector<ScriptWord> all_words_;  // every command word, for an argument file
  std::vector<ScriptWord> program_arguments_;
  bool found_ = false;
  bool found_training_ = false;
};

}  // namespace

std::vector<ScriptWord> launch_arguments(const std::string& text, const std::string& file) {
  return ScriptReader(Lexer(text, file).items(), file).arguments();
}

}  // namespace capsim::io
