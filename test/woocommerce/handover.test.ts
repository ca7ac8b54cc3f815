import { handOverOverHttp } from './handover';

handOverOverHttp('current', 'posts');
