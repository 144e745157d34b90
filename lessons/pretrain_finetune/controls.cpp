#include "lessons/pretrain_finetune/controls.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace lessons::pretrain_finetune {
namespace {

// A method's accuracy over the seeds, k = 1-3 or k = 4-6.
Spread accuracy_of(const std::vector<SubjectRun>& runs, const std::string& method, int64_t labelled,
                   bool extrapolation) {
    const auto all = method_accuracies(runs);
    const auto found = all.find({method, labelled});
    if (found == all.end())
        throw std::invalid_argument(fmt::format("move_of: no runs of {} with {} labels", method, labelled));
    return extrapolation ? found->second.extrapolation : found->second.in_distribution;
}

}  // namespace

std::vector<farm::Sentence> pretraining_corpus(const std::vector<farm::Sentence>& all, size_t n) {
    return {all.begin(), n ? all.begin() + static_cast<int64_t>(std::min(n, all.size())) : all.end()};
}

std::vector<PretrainingControl> pretraining_controls(const nn::LMConfig& config, const farm::Language& language,
                                                     uint64_t corpus_seed, size_t sentences) {
    const std::vector<farm::Sentence> baseline =
        pretraining_corpus(farm::make_corpora(corpus_seed, language).train, sentences);
    nn::LMConfig gpt2 = config;
    gpt2.init = nn::Init::Gpt2;
    return {{"gpt2_init", "GPT-2 init",
             "every weight matrix and embedding drawn from N(0, 0.02), biases 0 (instead of U(±1/√in) and N(0, 1))",
             gpt2, baseline, false},
            {"pretrain_k0-6", "k 0-6 in pre-training",
             fmt::format("as many pre-training sentences, k uniform over 0-{} instead of 0-3", kControlKMax), config,
             pretraining_corpus(farm::make_corpora_up_to(corpus_seed, language, kControlKMax).train, sentences), true}};
}

std::vector<MethodSpec> control_methods() {
    std::vector<MethodSpec> methods;
    for (const MethodSpec& spec : subject_methods())
        if (spec.method == Method::Probe || (spec.method == Method::FullFineTune && spec.lr == 1e-3))
            methods.push_back(spec);
    return methods;
}

ControlRun run_control(const PretrainingControl& control, const std::filesystem::path& out_dir,
                       const LmTrainOptions& options, const std::vector<farm::Sentence>& test,
                       const std::vector<std::vector<farm::Sentence>>& agreement_sets, const SubjectData& data,
                       int seeds, int64_t steps) {
    Progress progress;
    ControlRun run{control, cached_lm(out_dir, control.config, 0, control.corpus, options, &progress), 0, {}, {}};
    run.test_perplexity = perplexity(*run.lm.model, test);
    run.agreement = agreement_per_k(*run.lm.model, agreement_sets);
    // Every run starts from its own copy of the cached file, as the baseline's do.
    const nn::Checkpoint pretrained = nn::load_safetensors(run.lm.file.string());
    run.runs = train_subject_methods(control_methods(), data, seeds, steps, control.config, pretrained);
    return run;
}

Move move_of(const std::vector<SubjectRun>& baseline, const std::vector<SubjectRun>& control, const std::string& method,
             int64_t labelled, bool extrapolation) {
    Move m;
    m.baseline = accuracy_of(baseline, method, labelled, extrapolation);
    m.control = accuracy_of(control, method, labelled, extrapolation);
    if (m.baseline.values.size() != m.control.values.size())
        throw std::invalid_argument(fmt::format("move_of: {} baseline seeds against {} control seeds",
                                                m.baseline.values.size(), m.control.values.size()));
    m.change = m.control.mean - m.baseline.mean;
    const double sign = m.change > 0 ? 1 : -1;
    m.order = seed_order(m.change != 0, static_cast<int>(m.control.values.size()),
                         [&](size_t i) { return sign * (m.control.at(i) - m.baseline.at(i)) > 0; });
    return m;
}

}  // namespace lessons::pretrain_finetune
