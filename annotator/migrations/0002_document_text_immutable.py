"""A document's text is immutable once imported: the database refuses any UPDATE that changes it,
because every annotation's character offsets point into it."""
from django.db import migrations

FORBID_TEXT_CHANGE = """
CREATE OR REPLACE FUNCTION annotator_document_text_immutable() RETURNS trigger AS $$
BEGIN
    IF NEW.text IS DISTINCT FROM OLD.text OR NEW.content_hash IS DISTINCT FROM OLD.content_hash THEN
        RAISE EXCEPTION 'the text of document % is immutable', OLD.id USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER annotator_document_text_immutable BEFORE UPDATE ON annotator_document
    FOR EACH ROW EXECUTE FUNCTION annotator_document_text_immutable();
"""
ALLOW_TEXT_CHANGE = """
DROP TRIGGER IF EXISTS annotator_document_text_immutable ON annotator_document;
DROP FUNCTION IF EXISTS annotator_document_text_immutable();
"""


class Migration(migrations.Migration):
    dependencies = [("annotator", "0001_initial")]
    operations = [migrations.RunSQL(FORBID_TEXT_CHANGE, ALLOW_TEXT_CHANGE)]
