from annotator.corrections import Corrections, count_corrections


def span(start, end, label="NAME"):
    return {"start": start, "end": end, "label": label}


def test_accepted_suggestions_cost_nothing():
    suggested = [span(0, 3), span(10, 14, "DATE")]
    assert count_corrections(suggested, suggested) == Corrections()


def test_each_kind_of_correction_is_counted_once():
    suggested = [span(0, 3), span(10, 14, "DATE"), span(20, 25), span(30, 35, "AGE")]
    final = [
        span(0, 3),              # accepted
        span(10, 14, "AGE"),     # relabelled
        span(20, 28),            # end moved: a boundary change
        span(40, 44, "CITY"),    # missed by the model: a false negative fixed
    ]                            # 30-35 AGE removed: a false positive fixed
    assert count_corrections(suggested, final) == Corrections(
        fn_fixes=1, fp_fixes=1, relabels=1, boundary_changes=1)


def test_boundary_and_label_change_together_count_both():
    assert count_corrections([span(5, 9, "NAME")], [span(4, 9, "CITY")]) == Corrections(
        relabels=1, boundary_changes=1)


def test_a_split_suggestion_is_one_boundary_change_and_one_addition():
    # "Ana Ruiz" suggested as one span, corrected to two: one pairs with the suggestion, one is new.
    assert count_corrections([span(0, 8)], [span(0, 3), span(4, 8)]) == Corrections(
        fn_fixes=1, boundary_changes=1)


def test_no_suggestions_means_every_span_was_added():
    assert count_corrections([], [span(0, 3), span(5, 7)]) == Corrections(fn_fixes=2)
    assert count_corrections([span(0, 3)], []) == Corrections(fp_fixes=1)
