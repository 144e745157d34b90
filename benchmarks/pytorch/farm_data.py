"""The farm language (docs/farm_language.md) in plain Python, for the
PyTorch reference benchmark.

It follows the specification exactly -- same vocabulary in the same id
order, same grammar, same corpus sizes, both languages (the lecture's, whose
every choice follows Zipf's law with exponent 3.34 rotated by its context,
and the uniform one) -- but draws its random choices from Python's `random`
module, so the sentences are not the ones the C++ generator makes. Only the
distribution matters for a throughput or perplexity comparison, and that is
identical.

A sentence is a list of token ids:

    <s> the SUBJ (PREP the NOUN){k} VERB [the NOUN | MASS] [ADV] </s>
"""

import math
import random

import torch

# ---------------------------------------------------------------- vocabulary
# Ids 0..67 in exactly the order of docs/farm_language.md.
_ANIMALS = ["dog", "cat", "cow", "pig", "horse", "goat", "hen", "duck", "fox",
            "rabbit", "farmer", "donkey"]
_PLURALS = ["dogs", "cats", "cows", "pigs", "horses", "goats", "hens", "ducks",
            "foxes", "rabbits", "farmers", "donkeys"]
_PREPS = ["near", "behind", "beside", "with", "under", "by"]
_VERBS_SG = ["runs", "eats", "sleeps", "sees", "likes", "chases", "jumps",
             "walks", "follows", "watches", "pushes", "finds"]
_VERBS_PL = ["run", "eat", "sleep", "see", "like", "chase", "jump", "walk",
             "follow", "watch", "push", "find"]
_MASS = ["hay", "grass", "corn", "water", "mud"]
_ADVS = ["today", "again", "slowly", "quickly", "loudly"]

VOCAB = (["<pad>", "<s>", "</s>", "the"]
         + [w for pair in zip(_ANIMALS, _PLURALS) for w in pair]     # 4-27
         + _PREPS                                                    # 28-33
         + [w for pair in zip(_VERBS_SG, _VERBS_PL) for w in pair]   # 34-57
         + _MASS                                                     # 58-62
         + _ADVS)                                                    # 63-67
assert len(VOCAB) == 68

PAD, BOS, EOS, THE = 0, 1, 2, 3
NOUN0, PREP0, VERB0, MASS0, ADV0 = 4, 28, 34, 58, 63
N_NOUNS, N_PREPS, N_LEMMAS, N_MASS, N_ADVS = 24, 6, 12, 5, 5
IGNORE_INDEX = -100          # F.cross_entropy's default ignore_index
MAX_K = 3                    # training corpora: k uniform over 0..3


def decode(ids):
    """Token ids -> readable text (for debugging)."""
    return " ".join(VOCAB[i] for i in ids)


# ------------------------------------------------------------------ grammar
LANGUAGES = {"lecture": 3.34, "uniform": 0.0}   # the Zipf exponent s of each


class Choices:
    """Every choice among n options: rank r with p(r) = (r + 1)^-s / sum,
    taking option (offset + r) mod n (docs/farm_language.md's table of
    offsets). s = 0 is the uniform language, where offsets change nothing."""

    def __init__(self, s):
        self.s = s
        self.p = {}
        for n in (2, 4, 5, 6, 12):
            w = [(r + 1) ** -s for r in range(n)]
            self.p[n] = [x / sum(w) for x in w]

    def draw(self, rng, n, offset):
        return (offset + rng.choices(range(n), weights=self.p[n])[0]) % n

    def noun(self, rng, offset):
        """A count noun: its animal by rank after `offset`, its number uniform."""
        return NOUN0 + 2 * self.draw(rng, 12, offset) + rng.randrange(2)

    def log_p(self, n, offset, option):
        return math.log(self.p[n][(option - offset) % n])

    def log_p_noun(self, offset, noun):
        return self.log_p(12, offset, (noun - NOUN0) // 2) - math.log(2)


def animal(noun):
    return (noun - NOUN0) // 2


def sentence(rng, k, c):
    """One sentence with k prepositional phrases (attractors)."""
    subj = NOUN0 + rng.randrange(N_NOUNS)      # singular/plural alternate,
    plural = (subj - NOUN0) % 2                # so the parity is the number
    s = [BOS, THE, subj]
    for _ in range(k):                         # PP := PREP the NOUN
        before = animal(s[-1])
        s += [PREP0 + c.draw(rng, N_PREPS, before), THE, c.noun(rng, before + 1)]
    lemma = c.draw(rng, N_LEMMAS, animal(subj))
    s.append(VERB0 + 2 * lemma + plural)       # agrees with SUBJ
    slot = c.draw(rng, 4, lemma)               # OBJ: slots 0, 1 the NOUN, 2 MASS, 3 none
    if slot < 2:
        s += [THE, c.noun(rng, animal(subj) + 1)]
    elif slot == 2:
        s.append(MASS0 + c.draw(rng, N_MASS, lemma))
    if c.draw(rng, 2, lemma) == 0:             # ADV, slot 0
        s.append(ADV0 + c.draw(rng, N_ADVS, lemma))
    s.append(EOS)
    return s


def corpus(rng, n, c):
    """n sentences, k uniform over 0..MAX_K."""
    return [sentence(rng, rng.randrange(MAX_K + 1), c) for _ in range(n)]


def make_corpora(seed=0, language="uniform"):
    """train / valid / test (20,000 / 2,000 / 2,000 sentences), all from one
    seeded generator, in that order."""
    rng, c = random.Random(seed), Choices(LANGUAGES[language])
    return {"train": corpus(rng, 20_000, c), "valid": corpus(rng, 2_000, c),
            "test": corpus(rng, 2_000, c)}


def true_log_prob(s, c):
    """log p(s) under the language itself. The parse is unique (every choice
    leaves a different token), so p(s) is the product of the choices' odds;
    the best possible model reaches exp(-sum log p / predicted tokens)."""
    i, lp = 3, math.log(1 / (MAX_K + 1)) + math.log(1 / N_NOUNS)   # k, SUBJ
    while PREP0 <= s[i] < PREP0 + N_PREPS:     # each PP: PREP and NOUN
        before = animal(s[i - 1])
        lp += c.log_p(N_PREPS, before, s[i] - PREP0) + c.log_p_noun(before + 1, s[i + 2])
        i += 3
    lemma = (s[i] - VERB0) // 2                # VERB (its number is forced)
    lp += c.log_p(N_LEMMAS, animal(s[2]), lemma)
    i += 1
    if s[i] == THE:                            # OBJ
        lp += math.log(math.exp(c.log_p(4, lemma, 0)) + math.exp(c.log_p(4, lemma, 1)))
        lp += c.log_p_noun(animal(s[2]) + 1, s[i + 1])
        i += 2
    elif MASS0 <= s[i] < MASS0 + N_MASS:
        lp += c.log_p(4, lemma, 2) + c.log_p(N_MASS, lemma, s[i] - MASS0)
        i += 1
    else:
        lp += c.log_p(4, lemma, 3)
    if ADV0 <= s[i] < ADV0 + N_ADVS:           # ADV
        lp += c.log_p(2, lemma, 0) + c.log_p(N_ADVS, lemma, s[i] - ADV0)
    else:
        lp += c.log_p(2, lemma, 1)
    return lp


def true_perplexity(sentences, language="uniform"):
    """The language's own perplexity on these sentences (the floor)."""
    c = Choices(LANGUAGES[language])
    logp = sum(true_log_prob(s, c) for s in sentences)
    tokens = sum(len(s) - 1 for s in sentences)   # every token after <s>
    return math.exp(-logp / tokens)


# ----------------------------------------------------------------- batching
def make_lm_batches(sentences, batch_size=32, rng=None):
    """Language-model batches: a list of (inputs, targets, n_tokens).

    Each batch is right-padded with <pad> to its own longest sentence. A
    sentence of length L gives L-1 pairs: inputs[t] = s[t], targets[t] =
    s[t+1]; targets under padding are IGNORE_INDEX so the loss skips them.
    With rng the sentences are taken in a fresh random order (one shuffle
    per call, i.e. per epoch); the last batch may be smaller.
    """
    order = list(range(len(sentences)))
    if rng is not None:
        rng.shuffle(order)
    batches = []
    for b in range(0, len(order), batch_size):
        rows = [sentences[i] for i in order[b:b + batch_size]]
        T = max(len(s) for s in rows) - 1
        inputs = torch.full((len(rows), T), PAD, dtype=torch.long)
        targets = torch.full((len(rows), T), IGNORE_INDEX, dtype=torch.long)
        for r, s in enumerate(rows):
            inputs[r, :len(s) - 1] = torch.tensor(s[:-1])
            targets[r, :len(s) - 1] = torch.tensor(s[1:])
        n_tokens = sum(len(s) - 1 for s in rows)
        batches.append((inputs, targets, n_tokens))
    return batches
