#include "lessons/pretrain_finetune/subject_task.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>
#include <stdexcept>

#include "lessons/common/independent_runs.h"
#include "lessons/common/progress.h"
#include "nn/optim.h"

namespace lessons::pretrain_finetune {
namespace {

ag::Tensor as_tensor(const std::vector<double>& values) {
    return ag::Tensor::from({static_cast<int64_t>(values.size())}, values);
}

// The share of true values: an accuracy.
double share(const std::vector<bool>& correct) {
    const auto right = std::count(correct.begin(), correct.end(), true);
    return static_cast<double>(right) / static_cast<double>(correct.size());
}

// Every parameter's numbers, to check afterwards that a frozen body did not move.
std::vector<std::vector<double>> snapshot(const nn::Module& m) {
    std::vector<std::vector<double>> values;
    for (const ag::Tensor& p : m.parameters()) values.push_back(p.to_vector());
    return values;
}

SubjectRun run_one(const MethodSpec& spec, const std::vector<farm::Sentence>& train_set, int seed,
                   const SubjectData& data, int64_t steps, const nn::LMConfig& config,
                   const nn::Checkpoint& pretrained) {
    SubjectRun run;
    run.spec = spec;
    run.labelled = static_cast<int64_t>(train_set.size());
    run.seed = seed;

    const bool scratch = spec.method == Method::Scratch;
    nn::LanguageModel body(config, scratch ? static_cast<uint64_t>(seed) : 0);
    if (!scratch) nn::load_into(body, pretrained);  // a fresh copy: no run sees another's updates
    ag::Generator head_gen(kHeadSeed + static_cast<uint64_t>(seed));
    nn::ClassifierHead head(config.d_model, 2, head_gen);
    const bool train_body = spec.method != Method::Probe;
    run.trainable = head.num_trainable_parameters() + (train_body ? body.num_trainable_parameters() : 0);

    const auto before = snapshot(body);
    run.losses = train_subject_classifier(body, head, pack_prefixes(train_set), steps, spec.lr, train_body);
    run.body_unchanged = snapshot(body) == before;
    // The two test sets' predictions, pooled (k = 1-3, k = 4-6) and split by k.
    std::vector<int64_t> right(kTestKs, 0), seen(kTestKs, 0);
    const auto score = [&](const std::vector<farm::Sentence>& prefixes, const PackedPrefixes& packed) {
        const std::vector<bool> correct = subject_correct(body, head, packed);
        for (size_t i = 0; i < prefixes.size(); ++i) {
            const auto k = static_cast<size_t>(prefixes[i].k - 1);
            right.at(k) += correct[i];
            ++seen.at(k);
        }
        return share(correct);
    };
    run.in_distribution = score(data.test.in_distribution, data.in_distribution);
    run.extrapolation = score(data.test.extrapolation, data.extrapolation);
    for (int k = 0; k < kTestKs; ++k)  // NaN where the test sets hold no prefix of that k
        run.per_k.push_back(seen[k] ? static_cast<double>(right[k]) / static_cast<double>(seen[k]) : std::nan(""));
    return run;
}

}  // namespace

PackedPrefixes pack_prefixes(const std::vector<farm::Sentence>& prefixes) {
    std::vector<double> ids, labels;
    std::vector<int64_t> starts = {0}, last;
    for (const farm::Sentence& p : prefixes) {
        ids.insert(ids.end(), p.ids.begin(), p.ids.end());
        starts.push_back(static_cast<int64_t>(ids.size()));
        last.push_back(static_cast<int64_t>(ids.size()) - 1);
        labels.push_back(p.subject_plural);
    }
    nn::Packing packing = nn::Packing::from_starts(starts);
    nn::RowSelection last_rows = nn::RowSelection::of(packing, std::move(last));
    return {as_tensor(ids), std::move(packing), std::move(last_rows), as_tensor(labels)};
}

ag::Tensor last_hidden(const nn::LanguageModel& body, const PackedPrefixes& prefixes) {
    return body.hidden_at(prefixes.ids, prefixes.packing, prefixes.last);
}

std::vector<double> train_subject_classifier(nn::LanguageModel& body, nn::ClassifierHead& head,
                                             const PackedPrefixes& train, int64_t steps, double lr, bool train_body) {
    std::vector<ag::Tensor> params = head.trainable_parameters();
    ag::Tensor frozen;  // a probe's features: a frozen body gives the same ones every step
    if (train_body) {
        for (const ag::Tensor& p : body.trainable_parameters()) params.push_back(p);
    } else {
        ag::NoGradGuard no_graph;
        frozen = last_hidden(body, train);
    }
    optim::AdamW adam(params, lr, 0.9, 0.999, 1e-8, 0.0);  // PyTorch's Adam
    std::vector<double> losses;
    for (int64_t s = 0; s < steps; ++s) {
        const ag::Tensor loss =
            ag::cross_entropy(head.forward(train_body ? last_hidden(body, train) : frozen), train.labels);
        adam.zero_grad();
        loss.backward();
        adam.step();
        losses.push_back(loss.item());
    }
    return losses;
}

std::vector<bool> subject_correct(const nn::LanguageModel& body, const nn::ClassifierHead& head,
                                  const PackedPrefixes& prefixes) {
    ag::NoGradGuard no_graph;
    const std::vector<double> logits = head.forward(last_hidden(body, prefixes)).to_vector();  // [B, 2]
    const std::vector<double> labels = prefixes.labels.to_vector();
    std::vector<bool> correct;
    for (size_t b = 0; b < labels.size(); ++b) {
        const int predicted = logits[2 * b + 1] > logits[2 * b] ? 1 : 0;  // a tie reads as class 0, like argmax
        correct.push_back(predicted == static_cast<int>(labels[b]));
    }
    return correct;
}

double subject_accuracy(const nn::LanguageModel& body, const nn::ClassifierHead& head, const PackedPrefixes& prefixes) {
    return share(subject_correct(body, head, prefixes));
}

std::vector<SubjectRun> train_subject_methods(const std::vector<MethodSpec>& methods, const SubjectData& data,
                                              int seeds, int64_t steps, const nn::LMConfig& config,
                                              const nn::Checkpoint& pretrained) {
    Progress progress;
    const auto total = static_cast<int64_t>(methods.size() * data.train_sets.size()) * seeds;
    progress.begin(1, total);
    const auto start = std::chrono::steady_clock::now();
    const auto elapsed = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    int64_t done = 0, tokens = 0;
    double loss_sum = 0;
    auto runs = run_subject_methods(
        methods, data, seeds, steps, config, pretrained, [&](const SubjectRun& run, int64_t run_tokens) {
            tokens += run_tokens;
            loss_sum += run.losses.back();
            progress.step(1, ++done, run.losses.back(), static_cast<double>(tokens) / elapsed());
        });
    progress.epoch_done(1, loss_sum / static_cast<double>(total), static_cast<double>(tokens) / elapsed(), elapsed());
    return runs;
}

std::map<std::pair<std::string, int64_t>, MethodAccuracy> method_accuracies(const std::vector<SubjectRun>& runs) {
    struct Values {
        std::vector<double> in_distribution, extrapolation;
        std::vector<std::vector<double>> per_k = std::vector<std::vector<double>>(kTestKs);
    };
    std::map<std::pair<std::string, int64_t>, Values> values;
    for (const SubjectRun& run : runs) {
        Values& v = values[{run.spec.name, run.labelled}];
        v.in_distribution.push_back(run.in_distribution);
        v.extrapolation.push_back(run.extrapolation);
        for (int k = 0; k < kTestKs; ++k) v.per_k[k].push_back(run.per_k.at(k));
    }
    std::map<std::pair<std::string, int64_t>, MethodAccuracy> out;
    for (const auto& [key, v] : values) {
        MethodAccuracy& a = out[key];
        a.in_distribution = spread(v.in_distribution);
        a.extrapolation = spread(v.extrapolation);
        for (const auto& at_k : v.per_k) a.per_k.push_back(spread(at_k));
    }
    return out;
}

SubjectData make_subject_data(const std::vector<int64_t>& sizes, uint64_t train_seed, uint64_t test_seed,
                              int64_t test_prefixes, const farm::Language& language) {
    SubjectData data;
    for (int64_t n : sizes) data.train_sets.push_back(farm::make_subject_train_set(n, train_seed, language));
    data.test = farm::make_subject_test_sets(test_seed, language, test_prefixes);
    data.in_distribution = pack_prefixes(data.test.in_distribution);
    data.extrapolation = pack_prefixes(data.test.extrapolation);
    return data;
}

std::vector<MethodSpec> subject_methods() {
    return {{"scratch", Method::Scratch, 1e-3},
            {"linear probe", Method::Probe, 1e-3},
            {"full FT lr 1e-3", Method::FullFineTune, 1e-3},
            {"full FT lr 1e-4", Method::FullFineTune, 1e-4}};
}

std::vector<SubjectRun> run_subject_methods(const std::vector<MethodSpec>& methods, const SubjectData& data, int seeds,
                                            int64_t steps, const nn::LMConfig& config, const nn::Checkpoint& pretrained,
                                            const std::function<void(const SubjectRun&, int64_t)>& on_done) {
    struct Job {
        size_t method, set;
        int seed;
    };
    std::vector<Job> jobs;
    std::vector<int64_t> tokens;  // through the body: every step, or once for a probe
    for (size_t m = 0; m < methods.size(); ++m)
        for (size_t s = 0; s < data.train_sets.size(); ++s)
            for (int seed = 0; seed < seeds; ++seed) {
                jobs.push_back({m, s, seed});
                int64_t n = 0;
                for (const farm::Sentence& p : data.train_sets[s]) n += static_cast<int64_t>(p.ids.size());
                tokens.push_back(methods[m].method == Method::Probe ? n : n * steps);
            }
    std::vector<SubjectRun> runs(jobs.size());
    std::mutex progress;  // on_done is called by one run at a time
    run_independent(tokens, [&](size_t i) {
        const Job& job = jobs[i];
        runs[i] = run_one(methods[job.method], data.train_sets[job.set], job.seed, data, steps, config, pretrained);
        const std::lock_guard<std::mutex> lock(progress);
        if (on_done) on_done(runs[i], tokens[i]);
    });
    return runs;
}

}  // namespace lessons::pretrain_finetune
