#include "plugins/llvm_cpu/jit.h"

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Host.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <mutex>

#include "core/support/error.h"
#include "plugins/llvm_cpu/codegen_llvm.h"

namespace tessel::llvm_cpu {

namespace {

void initialize_llvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

std::string error_text(llvm::Error e) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << e;
  return os.str();
}

// Each item of `mattr` must be a feature LLVM knows for the host (the names its host detection
// reports, present or not): LLVM itself would only print a warning and ignore an unknown one.
void check_mattr(const std::string& mattr) {
  llvm::StringMap<bool> host;
  if (!llvm::sys::getHostCPUFeatures(host) || host.empty()) return;  // nothing to check against
  for (llvm::StringRef item : llvm::split(mattr, ',')) {
    item = item.trim();
    const llvm::StringRef name = item.startswith("+") || item.startswith("-") ? item.drop_front() : item;
    if (name.empty()) throw Error("llvm: mattr '" + mattr + "' has an empty item; expected e.g. '+avx2,-avx512f'");
    if (!host.count(name))
      throw Error("llvm: unknown mattr feature '" + name.str() +
                  "': not one of the CPU features LLVM detects on this host (e.g. avx2, fma, avx512f)");
  }
}

llvm::orc::JITTargetMachineBuilder machine_builder(const JitOptions& o) {
  auto host = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!host) throw Error("llvm: cannot detect the host: " + error_text(host.takeError()));
  llvm::orc::JITTargetMachineBuilder jtmb = std::move(*host);
  if (!o.mcpu.empty() && o.mcpu != "native") {
    // Checked before building the target machine, which would only print a warning and go on.
    std::string lookup_error;
    const llvm::Target* target = llvm::TargetRegistry::lookupTarget(jtmb.getTargetTriple().str(), lookup_error);
    std::unique_ptr<llvm::MCSubtargetInfo> info(
        target ? target->createMCSubtargetInfo(jtmb.getTargetTriple().str(), "", "") : nullptr);
    if (!info || !info->isCPUStringValid(o.mcpu))
      throw Error("llvm: unknown mcpu '" + o.mcpu + "' for " + jtmb.getTargetTriple().str() +
                  " (LLVM 15 knows e.g. znver3, skylake-avx512, icelake-server, sapphirerapids; 'native' = the host)");
    jtmb.setCPU(o.mcpu);
  }
  if (!o.mattr.empty()) {
    check_mattr(o.mattr);
    // Appended after the host's features, so each "+x"/"-x" overrides what the host said.
    for (llvm::StringRef f : llvm::split(o.mattr, ',')) jtmb.getFeatures().AddFeature(f.trim());
  }
  jtmb.setCodeGenOptLevel(o.opt_level >= 3 ? llvm::CodeGenOpt::Aggressive
                          : o.opt_level == 2 ? llvm::CodeGenOpt::Default
                          : o.opt_level == 1 ? llvm::CodeGenOpt::Less
                                             : llvm::CodeGenOpt::None);
  llvm::TargetOptions to;
  if (o.fast_math) {
    to.UnsafeFPMath = true;
    to.NoInfsFPMath = true;
    to.NoNaNsFPMath = true;
  }
  to.AllowFPOpFusion = llvm::FPOpFusion::Fast;
  jtmb.setOptions(to);
  return jtmb;
}

void optimize(llvm::Module& m, llvm::TargetMachine& tm, int opt_level) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel level = opt_level >= 3 ? llvm::OptimizationLevel::O3
                                  : opt_level == 2 ? llvm::OptimizationLevel::O2
                                  : opt_level == 1 ? llvm::OptimizationLevel::O1
                                                   : llvm::OptimizationLevel::O0;
  llvm::ModulePassManager mpm = level == llvm::OptimizationLevel::O0 ? pb.buildO0DefaultPipeline(level)
                                                                      : pb.buildPerModuleDefaultPipeline(level);
  mpm.run(m, mam);
}

// Re-reads the optimized IR (kept as text) into a fresh context and runs the backend on it for
// `type`: an object file or assembly. Exporting is rare and assembly is only wanted when someone
// looks at it, so neither costs the JIT path anything.
//
//   jit_compile: loop IR → LLVM IR → O3 → print (ir_) → LLJIT codegen       every compile
//   artifacts()["asm"], save_object(): ir_ → parse → TargetMachine → text/object    on request
void emit_from_ir(const std::string& ir, const JitOptions& options, llvm::CodeGenFileType type, llvm::raw_pwrite_stream& out,
                  const std::string& what) {
  llvm::orc::JITTargetMachineBuilder jtmb = machine_builder(options);
  if (type == llvm::CGFT_ObjectFile) jtmb.setRelocationModel(llvm::Reloc::PIC_);
  auto tm = jtmb.createTargetMachine();
  if (!tm) throw Error(what + ": llvm: cannot create a target machine: " + error_text(tm.takeError()));
  llvm::LLVMContext context;
  llvm::SMDiagnostic diagnostic;
  std::unique_ptr<llvm::Module> module = llvm::parseIR(llvm::MemoryBufferRef(ir, "kernels"), diagnostic, context);
  if (!module) throw Error(what + ": llvm: cannot re-read the optimized module: " + diagnostic.getMessage().str());
  module->setDataLayout((*tm)->createDataLayout());
  llvm::legacy::PassManager pm;
  if ((*tm)->addPassesToEmitFile(pm, out, nullptr, type)) throw Error(what + ": llvm: this target cannot emit that kind of file");
  pm.run(*module);
}

void write_object_file(const std::string& ir, const JitOptions& options, const std::string& path) {
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_None);
  if (ec) throw Error(path + ": cannot write: " + ec.message());
  emit_from_ir(ir, options, llvm::CGFT_ObjectFile, out, path);
  out.flush();
  if (out.has_error()) throw Error(path + ": cannot write: " + out.error().message());
}

std::string assembly_text(const std::string& ir, const JitOptions& options) {
  llvm::SmallString<4096> text;
  llvm::raw_svector_ostream os(text);
  emit_from_ir(ir, options, llvm::CGFT_AssemblyFile, os, "assembly");
  return std::string(text.str());
}

class LlvmModule final : public Module {
 public:
  LlvmModule(std::unique_ptr<llvm::orc::LLJIT> jit, const std::vector<loopir::Func>& kernels, std::string ir, JitOptions options)
      : jit_(std::move(jit)), ir_(std::move(ir)), options_(std::move(options)) {
    for (const auto& f : kernels) {
      auto address = jit_->lookup(f.name);
      if (!address) throw Error("kernel '" + f.name + "': llvm jit: " + error_text(address.takeError()));
      entries_.push_back(address->toPtr<void (*)(void* const*)>());
      add_kernel(kernel_signature(f));
    }
  }
  std::string target_kind() const override { return "llvm"; }
  std::map<std::string, std::string> artifacts() const override {
    std::map<std::string, std::string> a{{"llvm_ir", ir_}};
    if (options_.emit_asm) {
      // Made on the first request (a second backend run), then kept; artifacts() may be called
      // from several threads.
      std::call_once(asm_once_, [&] {
        try {
          asm_ = assembly_text(ir_, options_);
        } catch (const Error& e) {
          asm_ = std::string("(no assembly: ") + e.what() + ")";
        }
      });
      a["asm"] = asm_;
    }
    return a;
  }
  void save_object(const std::string& path) const override { write_object_file(ir_, options_, path); }

 protected:
  void invoke(size_t kernel_index, void* const* args) const override { entries_[kernel_index](args); }

 private:
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  std::vector<void (*)(void* const*)> entries_;
  std::string ir_;
  JitOptions options_;
  mutable std::once_flag asm_once_;
  mutable std::string asm_;
};

}  // namespace

std::unique_ptr<Module> jit_compile(const std::vector<loopir::Func>& kernels, const JitOptions& options) {
  initialize_llvm();
  llvm::orc::JITTargetMachineBuilder jtmb = machine_builder(options);
  auto tm = jtmb.createTargetMachine();
  if (!tm) throw Error("llvm: cannot create a target machine for cpu '" + options.mcpu + "': " + error_text(tm.takeError()));

  auto context = std::make_unique<llvm::LLVMContext>();
  CodegenOptions cg;
  cg.fast_math = options.fast_math;
  const llvm::MCSubtargetInfo* subtarget = (*tm)->getMCSubtargetInfo();
  cg.vnni = subtarget->checkFeatures("+avx512vnni") ? VnniForm::kAvx512Vnni512
            : subtarget->checkFeatures("+avxvnni")  ? VnniForm::kAvxVnni256
                                                    : VnniForm::kNone;
  cg.avx512f = subtarget->checkFeatures("+avx512f");
  std::unique_ptr<llvm::Module> module = emit_llvm_module(*context, kernels, cg);
  module->setDataLayout((*tm)->createDataLayout());
  module->setTargetTriple((*tm)->getTargetTriple().str());
  // Every function gets the target's CPU and features, so the vectorizer and the backend use them.
  for (llvm::Function& fn : *module) {
    if (fn.isDeclaration()) continue;
    fn.addFnAttr("target-cpu", (*tm)->getTargetCPU());
    fn.addFnAttr("target-features", (*tm)->getTargetFeatureString());
  }
  optimize(*module, **tm, options.opt_level);

  std::string ir;
  llvm::raw_string_ostream ir_os(ir);
  module->print(ir_os, nullptr);
  ir_os.flush();

  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(jtmb)).create();
  if (!jit) throw Error("llvm: cannot create the JIT: " + error_text(jit.takeError()));
  // Kernels call into this process: tessel_parallel_for (libtessel_core) and libm.
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess((*jit)->getDataLayout().getGlobalPrefix());
  if (!process) throw Error("llvm: cannot search the process for symbols: " + error_text(process.takeError()));
  (*jit)->getMainJITDylib().addGenerator(std::move(*process));
  if (auto err = (*jit)->addIRModule(llvm::orc::ThreadSafeModule(std::move(module), std::move(context))))
    throw Error("llvm: cannot add the module to the JIT: " + error_text(std::move(err)));
  return std::make_unique<LlvmModule>(std::move(*jit), kernels, std::move(ir), options);
}

std::string host_cpu_name() { return llvm::sys::getHostCPUName().str(); }

bool host_has_vnni() {
  llvm::StringMap<bool> features;
  llvm::sys::getHostCPUFeatures(features);
  return features.lookup("avx512vnni") || features.lookup("avxvnni");
}

std::string host_cpu_features() {
  llvm::StringMap<bool> features;
  llvm::sys::getHostCPUFeatures(features);
  std::string s;
  for (const auto& f : features)
    if (f.getValue()) s += (s.empty() ? "+" : ",+") + f.getKey().str();
  return s;
}

}  // namespace tessel::llvm_cpu
