//===- tools/sinterc/main.cpp - the sinterc command line -----------------------------===//
//
// Entry point of sinterc: builds the CLI11 app from the registered subcommands, parses the
// command line, runs the chosen subcommand and maps the outcome to the exit status of the
// tools contract (../shared/design/ARCHITECTURE.md): 0 success, 1 bad input or a failed
// check with one line `sinterc: <reason>` on stderr, 2 internal error.
//
//===--------------------------------------------------------------------------------===//
#include "Subcommand.h"

#include "compiler/Version.h"
#include "frontend/OnnxImport.h"
#include "ir/Error.h"
#include "ir/Parser.h"
#include "ir/Safetensors.h"
#include "runtime/Nvrtc.h"

#include "llvm/Support/raw_ostream.h"

#include <cctype>
#include <exception>
#include <vector>

namespace sinter::tool {

char InternalError::ID = 0;

llvm::Error internalError(const llvm::Twine &message) {
  return llvm::make_error<InternalError>(message.str());
}

llvm::Expected<LoadedGraph> loadGraphFile(llvm::StringRef path, llvm::StringRef graphName) {
  if (isOnnxPath(path)) {
    auto model = importOnnx(path);
    if (!model)
      return model.takeError();
    if (!graphName.empty() && graphName != model->graph.name)
      return makeError(path + ": the imported graph is named '" + model->graph.name + "', not '" +
                       graphName + "'");
    return LoadedGraph{std::move(model->graph), std::move(model->weights)};
  }
  auto graphs = parseSirFile(path);
  if (!graphs)
    return graphs.takeError();
  auto graph = selectGraph(std::move(*graphs), graphName, path);
  if (!graph)
    return graph.takeError();
  return LoadedGraph{std::move(*graph), {}};
}

llvm::Expected<Graph> loadGraph(llvm::StringRef path, llvm::StringRef graphName) {
  auto loaded = loadGraphFile(path, graphName);
  if (!loaded)
    return loaded.takeError();
  return std::move(loaded->graph);
}

void addMissing(TensorMap &tensors, const TensorMap &weights) {
  for (const auto &[name, t] : weights)
    tensors.emplace(name, t);
}

llvm::Expected<TensorMap> loadTensors(llvm::ArrayRef<std::string> paths) {
  TensorMap all;
  std::map<std::string, std::string> origin;
  for (const std::string &path : paths) {
    if (path.empty())
      continue;
    auto tensors = readSafetensors(path);
    if (!tensors)
      return tensors.takeError();
    for (auto &[name, t] : *tensors) {
      auto [it, inserted] = origin.emplace(name, path);
      if (!inserted)
        return makeError("tensor '" + name + "' is in both " + it->second + " and " + path);
      all.emplace(name, std::move(t));
    }
  }
  return all;
}

} // namespace sinter::tool

using namespace sinter::tool;

int main(int argc, char **argv) {
  CLI::App app{"sinterc: the sinter graph compiler's offline driver.\n\n"
               "Graphs are .sir text files (see docs and ../shared/design/IR.md) or ONNX models\n"
               "(.onnx, docs/onnx.md), whose weights are used unless --params gives others.\n"
               "Tensors go in and out as f32 safetensors files whose names are the graph's\n"
               "argument and result names without '%'. Exit status: 0 ok, 1 bad input or\n"
               "failed check (one line on stderr), 2 internal error.\n",
               "sinterc"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Print help for every subcommand");
  // The release, and what else decides which kernels this build writes.
  app.set_version_flag("--version", "sinterc " + sinter::sinterVersion().str() + " (NVRTC " +
                                        sinter::nvrtcVersion() + ", " +
                                        sinter::kCodegenVersion.str() + ")");

  // One line per subcommand (tools/sinterc/<Name>.cpp).
  std::vector<Subcommand> subcommands = {
      registerVerify(app),
      registerEval(app),
      registerCompile(app),
      registerExplain(app),
      registerRun(app),
      registerCheck(app),
  };

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    std::string message = e.what();
    while (!message.empty() && (message.back() == '\n' || message.back() == '.'))
      message.pop_back();
    // CLI11 writes sentences; the tools write one lower-case line.
    if (!message.empty())
      message[0] = char(std::tolower(static_cast<unsigned char>(message[0])));
    llvm::errs() << "sinterc: " << message << " (see 'sinterc --help')\n";
    return 1;
  }

  try {
    for (const Subcommand &sub : subcommands) {
      if (!sub.app->parsed())
        continue;
      int status = 0;
      llvm::handleAllErrors(
          sub.run(),
          [&](const InternalError &e) {
            llvm::errs() << "sinterc: internal error: " << e.message() << "\n";
            status = 2;
          },
          [&](const llvm::ErrorInfoBase &e) {
            llvm::errs() << "sinterc: " << e.message() << "\n";
            status = 1;
          });
      return status;
    }
  } catch (const std::exception &e) {
    llvm::errs() << "sinterc: internal error: " << e.what() << "\n";
    return 2;
  }
  llvm::errs() << "sinterc: no subcommand given (see 'sinterc --help')\n";
  return 1;
}
