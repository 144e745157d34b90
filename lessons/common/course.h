#pragma once
// The course around the lessons: the graded exercises, and what the
// lecture asks a student to learn (its learning goals, §0.1; its common
// pitfalls, §9; its exercises, §10), each with the lesson part that shows
// it. The course page (book.h) and docs/lessons.md (tools/findings) are
// both drawn from these lists, and the grader (tests/exercises) reads its
// exercises here.
#include <string>
#include <vector>

namespace lessons::course {

// One graded exercise: a stub in exercises/, its tests in tests/exercises/.
struct Exercise {
    int number = 0;
    std::string name;          // "wrong_rope": files exercises/ex07_wrong_rope.{h,cpp}
    std::string section;       // the lecture section(s) it practises: "§4.3", "§5.3, §6.4"
    std::string hint;          // where to look in the lecture when it fails
    std::string id() const;    // "ex07"
    std::string file() const;  // "exercises/ex07_wrong_rope.cpp", the file a student edits
};

// The 18 exercises, in order.
const std::vector<Exercise>& exercises();

// How the book shows a topic: on a model it trained, by a computation
// (an identity, a count, a formula evaluated), or stated in words.
enum class Shown { trained_model, computed, stated };
std::string to_string(Shown shown);  // "shown on a trained model", "computed", "stated"

// One of the lecture's learning goals, pitfalls or exercises, and the
// lesson part that shows it: the part of `lesson` whose sections include
// `section` (or, failing that, the lesson's first part in its chapter).
struct Topic {
    std::string label;    // "learning goal 2", "pitfall 6", "exercise 3"
    std::string text;     // what it says, in a line
    std::string lesson;   // "01_pretrain_finetune"
    std::string section;  // "§2.7"
    Shown shown = Shown::stated;
    int exercise = 0;  // the graded exercise that practises it (0: none)
};

// The lecture's 7 learning goals, 10 pitfalls and 10 exercises, in its order.
const std::vector<Topic>& topics();

// The lessons in reading order, with the lecture sections each follows.
struct LessonGuide {
    std::string name;      // "02_rope", the program and its page
    std::string sections;  // "§4"
    std::string folder;    // "lessons/rope/", where its parts' code lives
};
const std::vector<LessonGuide>& lessons();

// The lesson an exercise goes with: the one that follows the chapter of
// its first section (§5.3, §6.4 -> 03_gqa). Throws std::logic_error for an
// exercise no lesson follows.
const LessonGuide& lesson_of(const Exercise& e);

// Whether a part with sections `part_sections` ("§2.3-2.5", "§3.2, §7.1",
// "§9") covers `section` ("§2.4"): one of its sections or ranges holds it.
bool covers(const std::string& part_sections, const std::string& section);

// The exercises that practise what a part with sections `part_sections`
// covers: those with one of their sections among them.
std::vector<Exercise> exercises_for(const std::string& part_sections);

}  // namespace lessons::course
