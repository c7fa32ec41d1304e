from citeqa.text.analysis import cognate_keys, query_terms, terms


def test_cognate_keys_meet_across_languages_where_stems_do_not():
    en, es, pt = "the new processor", "el nuevo procesador", "o novo processador"
    assert not set(terms(en, "en")) & set(terms(es, "es"))
    assert cognate_keys(en) & cognate_keys(es) & cognate_keys(pt) == {"proce"}


def test_cognate_keys_keep_numbers_and_drop_stopwords():
    keys = cognate_keys("Desde abril de 2025, las ventas de 0,979 unidades")
    assert {"2025", "0.979", "abril", "venta"} <= keys
    assert not {"de", "las", "desde"} & keys


def test_query_terms_stem_once_per_language_without_repeats():
    found = query_terms("chips chips", ("es", "en"))
    assert found == list(dict.fromkeys(found)) and found


def test_bm25s_stopwords_read_from_their_file_are_bm25s_own_lists():
    import bm25s.stopwords

    from citeqa.text.analysis import read_bm25s_stopwords
    from citeqa.text.language import language_data

    read = read_bm25s_stopwords()
    names = set(language_data()["stopwords"].values())
    assert names and all(getattr(read, name) == getattr(bm25s.stopwords, name) for name in names)
