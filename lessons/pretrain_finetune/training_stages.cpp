#include "lessons/pretrain_finetune/training_stages.h"

#include <algorithm>
#include <stdexcept>

namespace lessons::pretrain_finetune {

DataCount count_data(const std::vector<farm::Sentence>& set) {
    DataCount c;
    c.examples = static_cast<int64_t>(set.size());
    for (const farm::Sentence& s : set) {
        c.tokens += static_cast<int64_t>(s.ids.size());
        c.plural += s.subject_plural;
    }
    c.singular = c.examples - c.plural;
    return c;
}

StageData stage_data(const std::vector<farm::Sentence>& corpus,
                     const std::vector<std::vector<farm::Sentence>>& labelled_sets, size_t shown) {
    if (labelled_sets.empty()) throw std::invalid_argument("stage_data: no labelled set");
    StageData d;
    d.corpus = count_data(corpus);
    for (size_t i = 0; i < std::min(shown, corpus.size()); ++i) d.sentences.push_back(farm::decode(corpus[i].ids));
    for (const auto& set : labelled_sets) d.labelled.push_back(count_data(set));
    const auto& smallest = labelled_sets.front();
    for (size_t i = 0; i < std::min(shown, smallest.size()); ++i) {
        d.prefixes.push_back(farm::decode(smallest[i].ids));
        d.prefix_plural.push_back(smallest[i].subject_plural);
    }
    return d;
}

}  // namespace lessons::pretrain_finetune
