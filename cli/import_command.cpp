// capsim import megatron FILE [-o SCENARIO.json] (--gpu NAME [--gpus-per-node N] |
//                             --instance NAME) --nodes N [--name NAME] [--allow-unmodelled]
// capsim import bridge RECIPE.yaml [-o SCENARIO.json] (--gpu NAME [--gpus-per-node N] |
//                                 --instance NAME) --nodes N [--name NAME] [--allow-unmodelled]
// capsim import hf CONFIG.json [-o MODEL.json] [--name NAME] [--seq-length N]
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "models/catalog.hpp"

#include "cli/cli_util.hpp"
#include "cli/commands.hpp"
#include "io/bridge_import.hpp"
#include "io/hf_config_import.hpp"
#include "io/input_error.hpp"
#include "io/input_file.hpp"
#include "io/json_reader.hpp"
#include "io/megatron_import.hpp"
#include "io/scenario_io.hpp"
#include "io/yaml_document.hpp"

namespace capsim::cli {
namespace {

void print_notes(const char* command, const std::vector<io::InputProblem>& notes) {
  for (const io::InputProblem& note : notes)
    std::fprintf(stderr, "%s: note: %s\n", command, io::describe_problem(note).c_str());
}

// Writes `text` to the -o file, or to stdout without one.
void emit(const cxxopts::ParseResult& args, const std::string& text) {
  if (args.count("output") > 0)
    io::write_file_atomically(args["output"].as<std::string>(), text);
  else
    std::cout << text << std::flush;
}

void check_output(const cxxopts::ParseResult& args, const std::string& input_role,
                  const std::string& input) {
  if (args.count("output") > 0)
    io::check_outputs({{"-o", args["output"].as<std::string>()}}, {{input_role, input}});
}

// The scenario's cluster object from --gpu/--gpus-per-node or --instance, and --nodes.
nlohmann::json cluster_option(const cxxopts::ParseResult& args, const Catalog& catalog) {
  const bool gpu = args.count("gpu") > 0;
  const bool instance = args.count("instance") > 0;
  if (gpu == instance) {
    throw io::InputError("--gpu", "",
                         "give the cluster: --gpu NAME [--gpus-per-node N] or --instance NAME, "
                         "with --nodes N");
  }
  if (args.count("nodes") == 0)
    throw io::InputError("--nodes", "", "missing: the number of nodes the run uses");
  const int nodes = args["nodes"].as<int>();
  if (nodes < 1 || nodes > (1 << 20))
    throw io::InputError("--nodes", "",
                         "expected 1 to 1048576 nodes, got " + std::to_string(nodes));
  if (instance) {
    const std::string name = args["instance"].as<std::string>();
    if (catalog.find_instance(name) == nullptr) {
      throw io::InputError("--instance", "",
                           "unknown instance \"" + name +
                               "\"; known instances: " + io::join_names(catalog.instance_names()));
    }
    if (args.count("gpus-per-node") > 0)
      throw io::InputError("--gpus-per-node", "", "is given by --instance " + name);
    return {{"instance", name}, {"num_nodes", nodes}};
  }
  const std::string name = args["gpu"].as<std::string>();
  if (catalog.find_gpu(name) == nullptr) {
    throw io::InputError(
        "--gpu", "",
        "unknown GPU \"" + name + "\"; known GPUs: " + io::join_names(catalog.gpu_names()));
  }
  const int per_node = args["gpus-per-node"].as<int>();
  if (per_node < 1 || per_node > 72) {
    throw io::InputError("--gpus-per-node", "",
                         "expected 1 to 72 GPUs per node, got " + std::to_string(per_node));
  }
  return {{"gpu", name}, {"gpus_per_node", per_node}, {"num_nodes", nodes}};
}

// The options `capsim import megatron` and `capsim import bridge` share: the input, the cluster,
// the name and --allow-unmodelled.
void add_layout_import_options(cxxopts::Options& options, const char* file_help) {
  options.positional_help("FILE");
  options.add_options()("file", file_help, cxxopts::value<std::string>())(
      "o,output", "write the scenario here (default: stdout)", cxxopts::value<std::string>())(
      "gpu", "the cluster's GPU (catalog name)", cxxopts::value<std::string>())(
      "gpus-per-node", "GPUs per node with --gpu", cxxopts::value<int>()->default_value("8"))(
      "instance", "the cluster's instance (catalog name), instead of --gpu",
      cxxopts::value<std::string>())("nodes", "nodes the run uses", cxxopts::value<int>())(
      "name", "the scenario's name (default: the file's name)", cxxopts::value<std::string>())(
      "allow-unmodelled",
      "model the run without the arguments that change the step but capsim does not model");
  options.parse_positional({"file"});
}

io::MegatronImportOptions layout_import_options(const cxxopts::ParseResult& args,
                                                const std::string& path, const Catalog& catalog) {
  io::MegatronImportOptions import_options;
  import_options.cluster = cluster_option(args, catalog);
  import_options.name = args.count("name") > 0 ? args["name"].as<std::string>()
                                               : std::filesystem::path(path).stem().string();
  import_options.allow_unmodelled = args.count("allow-unmodelled") > 0;
  return import_options;
}

int import_megatron_main(int argc, char** argv) {
  cxxopts::Options options("capsim import megatron",
                           "Read a Megatron-LM launch script or argument file as a scenario");
  add_layout_import_options(options, "launch script or argument file");
  cxxopts::ParseResult args;
  if (!parse_or_help(options, argc, argv, args))
    return 0;
  if (args.count("file") == 0)
    throw io::InputError("FILE", "", "missing argument: the launch script or argument file");
  const std::string path = args["file"].as<std::string>();
  check_output(args, "the launch script", path);
  Catalog catalog;
  const io::MegatronImportOptions import_options = layout_import_options(args, path, catalog);
  const std::string text = io::read_input_file(path, io::InputKind::kLog);
  const io::MegatronImport imported = io::import_megatron(text, path, import_options, catalog);
  print_notes("capsim import megatron", imported.notes);
  emit(args, io::scenario_to_json(imported.scenario).dump(2) + "\n");
  return 0;
}

int import_bridge_main(int argc, char** argv) {
  cxxopts::Options options("capsim import bridge",
                           "Read a Megatron-Bridge recipe's override YAML as a scenario");
  add_layout_import_options(options, "Megatron-Bridge recipe overrides (YAML)");
  cxxopts::ParseResult args;
  if (!parse_or_help(options, argc, argv, args))
    return 0;
  if (args.count("file") == 0)
    throw io::InputError("RECIPE.yaml", "", "missing argument: the recipe's override YAML");
  const std::string path = args["file"].as<std::string>();
  check_output(args, "the recipe", path);
  Catalog catalog;
  const io::MegatronImportOptions import_options = layout_import_options(args, path, catalog);
  const io::MegatronImport imported =
      io::import_bridge(io::parse_yaml_file(path), path, import_options, catalog);
  print_notes("capsim import bridge", imported.notes);
  emit(args, io::scenario_to_json(imported.scenario).dump(2) + "\n");
  return 0;
}

int import_hf_main(int argc, char** argv) {
  cxxopts::Options options("capsim import hf",
                           "Read a Hugging Face config.json as a scenario's model object");
  options.positional_help("CONFIG.json");
  options.add_options()("file", "Hugging Face config.json", cxxopts::value<std::string>())(
      "o,output", "write the model object here (default: stdout)", cxxopts::value<std::string>())(
      "name", "the model's name (default: its architecture)", cxxopts::value<std::string>())(
      "seq-length", "the training sequence length (config.json does not say it)",
      cxxopts::value<int>());
  options.parse_positional({"file"});
  cxxopts::ParseResult args;
  if (!parse_or_help(options, argc, argv, args))
    return 0;
  if (args.count("file") == 0)
    throw io::InputError("CONFIG.json", "", "missing argument");
  const std::string path = args["file"].as<std::string>();
  check_output(args, "the config", path);
  io::HfImportOptions import_options;
  if (args.count("name") > 0)
    import_options.name = args["name"].as<std::string>();
  if (args.count("seq-length") > 0) {
    import_options.seq_length = args["seq-length"].as<int>();
    if (import_options.seq_length < 1 || import_options.seq_length > (1 << 24)) {
      throw io::InputError(
          "--seq-length", "",
          "expected 1 to 16777216 tokens, got " + std::to_string(import_options.seq_length));
    }
  }
  const nlohmann::json config = io::JsonReader::parse_file(path);
  const io::HfImport imported = io::import_hf_config(config, path, import_options);
  print_notes("capsim import hf", imported.notes);
  emit(args, imported.model.dump(2) + "\n");
  return 0;
}

}  // namespace

int run_import(int argc, char** argv) {
  // Errors name the subcommand and its format: "capsim import megatron: error: ...".
  std::string name = std::string("capsim import") + (argc >= 2 ? std::string(" ") + argv[1] : "");
  return guarded(name.c_str(), [&] {
    if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
      std::printf(
          "usage: capsim import megatron FILE ... | capsim import bridge RECIPE.yaml ... |\n"
          "       capsim import hf CONFIG.json ...\n"
          "  megatron  a Megatron-LM launch script or argument file -> a scenario\n"
          "  bridge    a Megatron-Bridge recipe's override YAML -> a scenario\n"
          "  hf        a Hugging Face config.json -> a scenario's model object\n");
      return argc < 2 ? 2 : 0;
    }
    const std::string format = argv[1];
    argv[1] = name.data();
    if (format == "megatron")
      return import_megatron_main(argc - 1, argv + 1);
    if (format == "bridge")
      return import_bridge_main(argc - 1, argv + 1);
    if (format == "hf")
      return import_hf_main(argc - 1, argv + 1);
    throw io::InputError(format, "",
                         "unknown format; capsim imports \"megatron\", \"bridge\" and \"hf\"");
  });
}

}  // namespace capsim::cli
