#include "lessons/pretrain_finetune/parts.h"

#include <cmath>

#include <fmt/ranges.h>

#include "data/farm_language.h"
#include "lessons/pretrain_finetune/controls.h"
#include "lessons/pretrain_finetune/gpt_setup.h"
#include "lessons/pretrain_finetune/training_stages.h"

namespace lessons::pretrain_finetune {

namespace {

// "20,000 sentences, labelled sets of 16 and 256"
std::string data_sizes(int64_t sentences, const std::vector<int64_t>& labelled) {
    return fmt::format("{} sentences, labelled sets of {}", with_separators(std::to_string(sentences)),
                       fmt::join(labelled, " and "));
}

double one_decimal(double x) { return std::round(x * 10) / 10; }

}  // namespace

// §2.6-2.7: the lecture's pre-training data and training stages, beside the
// data and the stages of part 3 (the same corpus and labelled sets).
void part2_training_stages(Report& r, const Options& options) {
    const GptSetup setup = options.quick ? GptSetup::quick() : GptSetup::full();
    const farm::Language language = farm::Language::named(options.language);
    const std::vector<farm::Sentence> corpus =
        pretraining_corpus(farm::make_corpora(kCorpusSeed, language).train, setup.pretrain_sentences);
    std::vector<std::vector<farm::Sentence>> labelled_sets;
    for (int64_t n : setup.labelled) labelled_sets.push_back(farm::make_subject_train_set(n, kTrainSetSeed, language));
    constexpr size_t kShown = 4;
    const StageData d = stage_data(corpus, labelled_sets, kShown);

    r.paragraph(
        "§2.6: for a deep language model, unsupervised pre-training is lecture 3's generative pre-training: each "
        "training example is an unlabelled sentence $x_1 \\ldots x_T$ and the objective is the likelihood of the "
        "observed sentences, $\\log p(x) = \\sum_t \\log p(x_t \\mid x_{<t})$, with many examples batched together "
        "for speed. The lecture's two examples of such data, and ours:");
    r.table("pretraining_data", {"corpus", "what it holds"},
            {{"GPT-3's training data",
              "mostly filtered Common Crawl, with WebText2, two book corpora and Wikipedia, each sampled by a weight "
              "for its quality"},
             {"The Pile", "an open training set of 22 smaller datasets, weighted to high-quality text, about 825 GB"},
             {"ours: the farm corpus", fmt::format("{} sentences of one synthetic grammar over {} words, {} tokens",
                                                   with_separators(std::to_string(d.corpus.examples)), farm::VOCAB_SIZE,
                                                   with_separators(std::to_string(d.corpus.tokens)))}});
    std::vector<std::vector<Cell>> rows;
    for (size_t i = 0; i < d.sentences.size(); ++i) rows.push_back({i + 1, d.sentences[i]});
    r.paragraph("The first {} sentences of our pre-training corpus, as the GPT reads them:", d.sentences.size());
    r.table("corpus_sentences", {"#", "sentence"}, rows);
    r.value("corpus_sentences", static_cast<double>(d.corpus.examples), "pre-training sentences");
    r.value("corpus_tokens", static_cast<double>(d.corpus.tokens), "pre-training tokens");

    rows.clear();
    for (size_t i = 0; i < d.prefixes.size(); ++i)
        rows.push_back({i + 1, d.prefixes[i], d.prefix_plural[i] ? "plural" : "singular"});
    r.paragraph(
        "The labelled data of part 3 is another kind: a prefix up to the verb and its label, the number of its "
        "subject. The first {} of the {} labelled examples:",
        d.prefixes.size(), setup.labelled.front());
    r.table("labelled_examples", {"#", "prefix", "label"}, rows);

    r.paragraph(
        "§2.7: the lecture splits today's LLM training into three stages, pre-training → mid-training → "
        "post-training. This lesson's part 3 runs two kinds of training, which stand where these stages do:");
    rows = {{"pre-training", "part 3 trains the GPT to predict the next word of unlabelled farm sentences",
             d.corpus.examples, d.corpus.tokens, "none"},
            {"mid-training", "none: this toy has no stage between the two", "—", "—", "—"}};
    for (const DataCount& c : d.labelled)
        rows.push_back({"post-training (supervised)",
                        fmt::format("part 3's linear probe and full fine-tuning on {} labelled prefixes", c.examples),
                        c.examples, c.tokens, fmt::format("{} singular, {} plural", c.singular, c.plural)});
    r.table("stages", {"stage", "in this lesson", "examples", "tokens", "labels"}, rows);
    for (const DataCount& c : d.labelled)
        r.value(fmt::format("labelled_{}_tokens", c.examples), static_cast<double>(c.tokens));
    r.paragraph(
        "Part 1's layer-wise pre-training of digits is §2.3-2.4, an older method and not a stage of an LLM's "
        "training.");
    // §2.2's pattern, cheap plentiful data to pre-train and scarce labels to
    // fine-tune, in the sizes §2.8 states; the ratios are facts of our data,
    // not tested against a cutoff (the lecture gives none).
    const DataCount& largest = d.labelled.back();
    const double example_ratio = static_cast<double>(d.corpus.examples) / static_cast<double>(largest.examples);
    const double token_ratio = static_cast<double>(d.corpus.tokens) / static_cast<double>(largest.tokens);
    std::vector<int64_t> sizes;
    for (const DataCount& c : d.labelled) sizes.push_back(c.examples);
    std::vector<std::string> lecture_ratios;
    for (int64_t n : kLectureLabelled)
        lecture_ratios.push_back(
            with_separators(fmt::format("{:g}", static_cast<double>(kLectureSentences) / static_cast<double>(n))));
    r.paragraph(
        "§2.2's pattern: pre-training uses cheap, plentiful data, fine-tuning expensive, scarce labelled data. The "
        "lecture's §2.8 pre-trains on {} unlabelled sentences and fine-tunes on {} labelled examples: {} times as "
        "many examples to pre-train on (it counts no tokens). Ours, against the largest labelled set ({} prefixes):",
        with_separators(std::to_string(kLectureSentences)), fmt::join(kLectureLabelled, " or "),
        fmt::join(lecture_ratios, " or "), largest.examples);
    r.value("examples_per_labelled_example", one_decimal(example_ratio),
            "pre-training sentences per labelled prefix of the largest set");
    r.value("tokens_per_labelled_token", one_decimal(token_ratio),
            "pre-training tokens per labelled token of the largest set");
    const bool as_lecture = d.corpus.examples == kLectureSentences && sizes == kLectureLabelled;
    const std::string ours = data_sizes(d.corpus.examples, sizes),
                      lecture = data_sizes(kLectureSentences, kLectureLabelled);
    r.claim({"data_sizes_as_lecture",
             fmt::format("The GPT is pre-trained on {} unlabelled sentences and learns the task from {} labelled "
                         "examples (§2.8)",
                         with_separators(std::to_string(kLectureSentences)), fmt::join(kLectureLabelled, " or ")),
             lecture, ours, as_lecture,
             fmt::format("our pre-training corpus and labelled sets, counted: {}; the lecture's: {}{}", ours, lecture,
                         as_lecture || !options.quick ? "" : " (--quick: a corpus of a few hundred sentences)"),
             ClaimKind::check,
             fmt::format("Tested our data against §2.8's sizes: {}, the lecture {}: {}.", ours, lecture,
                         as_lecture ? "the same, reproduced" : "different, not reproduced")});
    r.takeaway(fmt::format(
        "Part 3 pre-trains on {} unlabelled sentences, then post-trains on {} or {} labelled "
        "prefixes; it has no mid-training stage.",
        with_separators(std::to_string(d.corpus.examples)), d.labelled.front().examples, d.labelled.back().examples));
}

const Lesson& lesson() {
    static const Lesson pretrain_finetune{
        "01_pretrain_finetune",
        "Pre-training and fine-tuning",
        "§2 Pre-training vs fine-tuning · 预训练 vs 微调",
        3,
        {{"§2.3-2.4",
          "Greedy layer-wise pre-training on MNIST digits",
          "A deep net whose layers are first trained one at a time (as autoencoders, or with labels) and then "
          "fine-tuned on a few labels, against a shallow net and the same deep net trained from scratch.",
          part1_layerwise_digits,
          {"lessons/pretrain_finetune/layerwise.cpp", "lessons/pretrain_finetune/digits_comparison.cpp"}},
         {"§2.6-2.7",
          "Pre-training data and the three training stages",
          "Real sentences of the pre-training corpus and real labelled examples of the subject-number task, counted, "
          "and which of the lecture's three stages (pre-training, mid-training, post-training) each of part 3's runs "
          "is.",
          part2_training_stages,
          {"lessons/pretrain_finetune/training_stages.cpp"}},
         {"§2.8",
          "Pre-trained GPT + fine-tuning vs training from scratch",
          "The lecture-2 GPT, pre-trained on unlabelled farm sentences, learns the subject-number task from 16 or "
          "256 labels by a linear probe (the body frozen, only a 2-way linear head trained) or full fine-tuning, "
          "against the same GPT trained from scratch and "
          "against asking the language model itself (zero-shot); then two pre-training controls, GPT-2's "
          "initialisation and a corpus with k = 4-6 too, measure why the probe falls short at k = 4-6.",
          part3_gpt_finetuning,
          {"lessons/pretrain_finetune/subject_task.cpp", "lessons/pretrain_finetune/controls.cpp"}}},
        {{"labels", "part 1: labelled training images per seed (class-balanced)", 300, 10, 8000}},
        FarmLanguage::used};
    return pretrain_finetune;
}

}  // namespace lessons::pretrain_finetune
